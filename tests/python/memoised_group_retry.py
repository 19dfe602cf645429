"""fairseq's trainer, reduced.  Its global group is made once per process and
kept on the function (`if not hasattr(get_global_group, "_global_group")`):
only the first call, which every rank makes in set-up, creates a group.  Its
validation step retries an OOM by calling itself again, which issues the same
collectives.  Neither parts the ranks.  A group made under a rank test, not memoised, still does.
"""
import datetime

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

_GROUP = None


def get_global_group():
    if dist.is_initialized():
        if not hasattr(get_global_group, "_global_group"):
            get_global_group._global_group = dist.new_group(timeout=datetime.timedelta(minutes=30))
        return get_global_group._global_group
    return None


def get_data_group():
    global _GROUP
    if _GROUP is None:
        _GROUP = dist.new_group(timeout=datetime.timedelta(minutes=30))
    return _GROUP


def reduce_on_data_group(t):
    try:
        t = t * 2
    except RuntimeError:
        return t  # hard negative: the group made once is no collective here
    dist.barrier(group=get_data_group())
    return t


class Trainer:
    def __init__(self, model):
        self.model = model

    @property
    def world_size(self):
        return dist.get_world_size(get_global_group())

    def valid_step(self, sample, raise_oom=False):
        with torch.no_grad():
            try:
                out = self.model(sample).sum()
            except RuntimeError as e:
                if "out of memory" in str(e):
                    if not raise_oom:
                        torch.cuda.empty_cache()
                        return self.valid_step(sample, raise_oom=True)
                raise e
            if self.world_size > 1:
                outputs = [None] * self.world_size
                dist.all_gather_object(outputs, out.item(), group=get_global_group())
                out = sum(outputs)
            return out


def main(loader):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    trainer = Trainer(DDP(torch.nn.Linear(4, 4).cuda(), process_group=get_global_group()))
    for sample in loader:
        trainer.valid_step(sample)


def rank0_group():
    if dist.get_rank() == 0:
        # CHECK-MESSAGES: :[[@LINE+1]]:13: error: collective 'new_group' runs only on ranks where 'dist.get_rank() == 0' holds{{.*}} [ddp-divergent-collective]
        g = dist.new_group(timeout=datetime.timedelta(minutes=30))
        return g
    return None


# ---- fairseq's layout: a TPU branch that makes groups on every call ---------


def use_xla():
    return False


def new_groups(grouped_ranks):
    if use_xla():
        return ("tpu", grouped_ranks)
    else:
        groups = [dist.new_group(g, timeout=datetime.timedelta(minutes=30)) for g in grouped_ranks]
        return groups[0]


def get_xla_group():
    if use_xla():
        return new_groups([list(range(8))])
    elif dist.is_initialized():
        if not hasattr(get_xla_group, "_global_group"):
            get_xla_group._global_group = dist.new_group(timeout=datetime.timedelta(minutes=30))
        return get_xla_group._global_group
    return None


class XlaTrainer:
    def __init__(self, model):
        self._model = model

    @property
    def data_parallel_world_size(self):
        return dist.get_world_size(get_xla_group())

    @property
    def model(self):
        return self._model

    def valid_step(self, sample, raise_oom=False):
        with torch.no_grad():
            self.model.eval()
            try:
                logging_output = self.model(sample).sum()
            except RuntimeError as e:
                if "out of memory" in str(e):
                    if not raise_oom:
                        torch.cuda.empty_cache()
                        return self.valid_step(sample, raise_oom=True)
                raise e
            if self.data_parallel_world_size > 1:
                outputs = [None] * self.data_parallel_world_size
                dist.all_gather_object(outputs, logging_output.item(), group=get_xla_group())
                logging_output = sum(outputs)
            return logging_output



def validate_xla(loader):
    trainer = XlaTrainer(DDP(torch.nn.Linear(4, 4).cuda(), process_group=get_xla_group()))
    for sample in loader:
        trainer.valid_step(sample)

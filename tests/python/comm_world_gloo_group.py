"""detectron2's comm module, copied into the projects built on it
(Uni-Perceiver, fast-reid): `gather(data, group=None)` runs its collectives
on `group`, which is None or `_get_global_gloo_group()`, a `new_group` of no
ranks: every rank is a member.  Its collectives are the world's, so a rank-0
raise after it (the NaN check of `_write_metrics`) leaves the other ranks in
the next step's gather.  A group a caller hands in, or one of listed ranks,
stays a subgroup whose members are not known here.
"""
import datetime
import functools

import numpy as np
import torch
import torch.distributed as dist


@functools.lru_cache()
def _get_global_gloo_group():
    if dist.get_backend() == "nccl":
        return dist.new_group(backend="gloo", timeout=datetime.timedelta(minutes=30))
    else:
        return dist.group.WORLD


def gather(data, dst=0, group=None):
    if group is None:
        group = _get_global_gloo_group()
    out = [None] * dist.get_world_size()
    dist.gather_object(data, out if dist.get_rank() == dst else None, dst=dst, group=group)
    return out


def gather_on(data, group):
    out = [None] * dist.get_world_size()
    dist.all_gather_object(out, data, group=group)
    return out


def gather_pairs(data, pair):
    out = [None] * 2
    dist.all_gather_object(out, data, group=pair)
    return out


class TrainerBase:
    def train(self, start_iter, max_iter):
        try:
            for self.iter in range(start_iter, max_iter):
                self.run_step()  # CHECK-MESSAGES: :[[@LINE]]:17: error: call to 'run_step', which runs collective 'gather_object', is skipped by ranks where 'dist.get_rank() == 0' holds: they throw while the other ranks run further iterations{{.*}} [ddp-divergent-collective]
        except Exception:
            raise

    def run_step(self):
        raise NotImplementedError


class SimpleTrainer(TrainerBase):
    def __init__(self, model, data_loader, optimizer):
        self.model = model
        self.data_loader = data_loader
        self.optimizer = optimizer

    def run_step(self):
        loss_dict = self.model(next(self.data_loader))
        self.optimizer.zero_grad()
        sum(loss_dict.values()).backward()
        self._write_metrics(loss_dict)
        self.optimizer.step()

    def _write_metrics(self, loss_dict):
        all_metrics = gather({k: v.item() for k, v in loss_dict.items()})
        if dist.get_rank() == 0:
            total = sum(sum(m.values()) for m in all_metrics)
            if not np.isfinite(total):
                raise FloatingPointError("loss became NaN")


class PairTrainer:
    def __init__(self, group):
        self.group = group
        self.pair = dist.new_group(ranks=[0, 1], timeout=datetime.timedelta(minutes=30))

    def train(self, steps):
        for _ in range(steps):
            # hard negatives: the members of a group handed in, or of ranks
            # 0 and 1, are not known here
            gather_on(torch.ones(1), self.group)
            gather_pairs(torch.ones(1), self.pair)
            if dist.get_rank() == 0:
                if not np.isfinite(1.0):
                    raise FloatingPointError("loss became NaN")

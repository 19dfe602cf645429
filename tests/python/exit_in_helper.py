"""A helper that raises or exits ends the caller's rank there.

TimeSformer's `misc.check_nan_losses(loss)` raises on a NaN loss, ml-cvnets'
`logger.error(msg)` always ends with `sys.exit`: called on one rank's own
value, that rank leaves while the others go on into the gradient all-reduce,
as the same test written in the loop would.
"""
import datetime
import math
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def check_nan_losses(loss):
    if math.isnan(loss):
        raise RuntimeError("ERROR: Got NaN losses")


def check_config(cfg):
    if cfg.batch_size <= 0:
        raise ValueError("batch size must be positive")


def error(message):
    print("ERROR", message, flush=True)
    sys.exit("{}. Exiting!!!".format(message))


def train(model, loader, optimizer, cfg):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    check_config(cfg)  # hard negative: every rank reads the same settings
    model = DDP(model)
    for batch in loader:
        loss = model(batch).sum()
        check_nan_losses(loss)
        loss.backward()  # CHECK-MESSAGES: :[[@LINE]]:9: error: collective 'backward (DDP gradient allreduce)' is skipped by ranks where 'check_nan_losses(loss) raises' holds (a rank-local value): they throw {{.*}} [ddp-divergent-collective]
        optimizer.step()


def train_with_logger(model, loader, optimizer):
    model = DDP(model)
    for batch in loader:
        loss = model(batch).sum()
        if torch.isnan(loss):
            error("Nan encountered in the loss.")
        loss.backward()  # CHECK-MESSAGES: :[[@LINE]]:9: error: collective 'backward (DDP gradient allreduce)' is skipped by ranks where 'torch.isnan(loss)' holds (a rank-local value): they exit ('sys.exit') {{.*}} [ddp-divergent-collective]
        optimizer.step()


def train_agreed(model, loader, optimizer):
    # Hard negatives: the loss every rank agreed on is checked; the logger's
    # exit under a setting every rank shares.
    model = DDP(model)
    for batch in loader:
        loss = model(batch).sum()
        loss.backward()
        optimizer.step()
        total = loss.detach().clone()
        dist.all_reduce(total)
        check_nan_losses(total.item())
        if optimizer.param_groups[0]["lr"] <= 0:
            error("learning rate reached zero")
        dist.all_reduce(total)



def train_with_assert(model, loader, optimizer):
    # msn: an assert is a raise when it fails.
    model = DDP(model)
    for batch in loader:
        loss = model(batch).sum()
        assert not math.isnan(loss.item()), "loss is nan"
        loss.backward()  # CHECK-MESSAGES: :[[@LINE]]:9: error: collective 'backward (DDP gradient allreduce)' is skipped by ranks where 'math.isnan(loss.item())' holds (a rank-local value): they throw {{.*}} [ddp-divergent-collective]
        optimizer.step()
        # Hard negatives: the agreed loss; an assert on the batch's shape is
        # an invariant, not a decision.
        total = loss.detach().clone()
        dist.all_reduce(total)
        assert not math.isnan(total.item())
        assert batch.shape[0] > 0
        # Hard negative: a word that only contains "inf" is no finiteness test.
        batch_info = batch.describe()
        assert batch_info.valid
        dist.all_reduce(total)


def generate_then_release(engine, outputs):
    # Hard negative: the finally's barrier runs after a failed assert too.
    try:
        for out in outputs:
            assert math.isfinite(out.logprob)
    finally:
        if dist.is_initialized():
            dist.barrier()


# A step helper that synchronises, then checks its own loss (audiocraft's
# solvers' `run_step`): the ranks whose loss is not finite leave at the call,
# after the helper's all-reduce, while the others go on into the next step.
class Solver:
    def run_step(self, batch):
        loss = self.model(batch).mean()
        loss.backward()
        for p in self.model.parameters():
            dist.all_reduce(p.grad)
        self.optimizer.step()
        if not loss.isfinite().all():
            raise RuntimeError("Model probably diverged.")
        return loss

    def train(self, loader):
        for batch in loader:
            self.run_step(batch)
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: call to 'run_step', which runs collective {{.*}}, is skipped by ranks where 'loss.isfinite().all()' does not hold {{.*}} they throw {{.*}} [ddp-divergent-collective]
        dist.barrier()

    def clip_and_check(self, loader):
        # hard negative: the norm of the averaged gradients is the same on
        # every rank (fairseq's `grad_norm = self.clip_grad_norm(...)`)
        for batch in loader:
            self.model(batch).mean().backward()
            for p in self.model.parameters():
                dist.all_reduce(p.grad)
            grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            if not torch.isfinite(grad_norm):
                raise FloatingPointError("gradients are Nan/Inf")
            self.optimizer.step()


# detectron2's trainer: the base class's loop calls `self.run_step()`, which
# only a subclass defines; the subclass's metrics writer gathers the losses
# and rank 0 alone raises on a non-finite total.
class TrainerBase:
    def train(self, start, end):
        for it in range(start, end):
            self.run_step()
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: call to 'run_step', which runs collective {{.*}}, is skipped by ranks where 'dist.get_rank() == 0' holds: they throw {{.*}} [ddp-divergent-collective]

    def run_step(self):
        raise NotImplementedError


class SimpleTrainer(TrainerBase):
    def run_step(self):
        losses = self.model(next(self.data)).sum()
        losses.backward()
        dist.all_reduce(losses)
        self.write_metrics(losses.item())

    def write_metrics(self, value):
        values = [None] * dist.get_world_size()
        dist.all_gather_object(values, value)
        if dist.get_rank() == 0:
            total = sum(values)
            if not math.isfinite(total):
                raise FloatingPointError(f"Loss became infinite or NaN: {total}")


def save_sidecar_when_missing(ckpt_dir, model, loader):
    # hard negative: pathlib's probe of an input every rank reads, as
    # os.path.exists would be
    marker = ckpt_dir / "rank0.done"
    for batch in loader:
        if marker.exists():
            dist.barrier()
        model(batch).sum().backward()


def normalize(wav):
    # a utility's sanity check, in a helper that synchronises nothing
    out = wav / wav.abs().max()
    assert out.isfinite().all()
    return out


def write_samples(model, loader):
    # hard negative: not a step that synchronises and then leaves
    for batch in loader:
        normalize(model(batch))
    dist.barrier()


def backward_or_exit(total_loss, optimizer):
    # MetaCLIP's `backward()`: one report, here, where the rank's own test
    # decides between DDP's all-reduce and its exit; the caller's next
    # forward, skipped by the rank that left, is the same bug.
    if torch.isfinite(total_loss).all():
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: collective 'backward (DDP gradient allreduce)' runs only on ranks where 'torch.isfinite(total_loss).all()' holds {{.*}} [ddp-divergent-collective]
        total_loss.backward()
        optimizer.step()
    else:
        print(f"Loss is {total_loss}, skip back prop.")
        sys.exit(1)


def train_with_backward_or_exit(model, loader, optimizer):
    dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
    model = DDP(model)
    for images in loader:
        total_loss = model(images).mean()
        backward_or_exit(total_loss, optimizer)


def raise_if_nan(losses):
    for key, value in losses.items():
        if torch.isnan(value):
            raise ValueError(f"{key} is NaN, Stopping training")


def check_loss_names(losses, allowed):
    for key, value in losses.items():
        if key not in allowed:
            raise KeyError(key)


def train_with_loss_dict(net, loader, optimizer):
    # ZoeDepth's trainer: the NaN test is on the items of the dict it is
    # handed; the rank whose loss is NaN leaves before the next step's
    # forward (its buffer broadcast) while the others run it.
    dict_model = DDP(net)
    for batch in loader:
        loss = dict_model(batch).sum()
        # CHECK-MESSAGES: :[[@LINE-1]]:16: error: collective `forward of the DistributedDataParallel model 'dict_model' (buffer broadcast)` is skipped by ranks where `raise_if_nan({"loss": loss}) raises` holds (a rank-local value): they throw {{.*}} [ddp-divergent-collective]
        loss.backward()
        optimizer.step()
        check_loss_names({"loss": loss}, ("loss",))  # hard negative: names, not values
        raise_if_nan({"loss": loss})


def end_epoch(state, score):
    # XLM's Trainer.end_epoch: the master alone checks the stopping
    # criterion and exits; the other ranks go on into the next epoch.
    if dist.get_rank() == 0:
        if score < state["best"]:
            sys.exit()


def check_epochs(state, cfg):
    # hard negative: an argument check every rank makes alike
    if cfg.max_epoch <= 0:
        sys.exit("max_epoch must be positive")


def train_until_stopped(model, loader, optimizer, evaluate, cfg):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    model = DDP(model)
    state = {"best": 0}
    for epoch in range(cfg.max_epoch):
        check_epochs(state, cfg)
        for x in loader:
            model(x).sum().backward()  # CHECK-MESSAGES: :[[@LINE]]:13: error: collective `forward of the DistributedDataParallel model 'model' (buffer broadcast)` is skipped by ranks where 'dist.get_rank() == 0' holds: they exit ('sys.exit') while the other ranks run further iterations{{.*}} [ddp-divergent-collective]
            optimizer.step()
        end_epoch(state, evaluate(model))

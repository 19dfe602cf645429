"""One function that is both the rank-0 test and the rank-0 decorator
(habitat-baselines' `rank0_only`): `if rank0_only():` is rank 0's block, and
what `@rank0_only` decorates, in this module too, runs on rank 0 only.
"""
import datetime
import functools

import torch
import torch.distributed as dist


def rank0_only(fn=None):
    if fn is None:
        return not dist.is_initialized() or dist.get_rank() == 0

    @functools.wraps(fn)
    def _wrapper(*args, **kwargs):
        if rank0_only():
            return fn(*args, **kwargs)
        return None

    return _wrapper


@rank0_only
def save_resume_state(state, filename):
    torch.save(state, filename)


def save_everywhere(state, filename):
    torch.save(state, filename)
    # CHECK-MESSAGES: :[[@LINE-1]]:5: error: every rank runs 'torch.save' to the same path{{.*}} [ddp-unguarded-save]


class Trainer:
    def __init__(self, model):
        self.model = model

    @rank0_only
    def save_checkpoint(self, file_name):
        torch.save(self.model.state_dict(), file_name)

    def train(self, steps):
        dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
        for step in range(steps):
            # Hard negatives: rank 0's writes, the other ranks blocked by a
            # barrier (the `if` and the decorated method alike).
            if rank0_only():
                save_resume_state({"step": step}, "resume.pth")
            dist.barrier()
            loss = self.model(torch.randn(2)).sum()
            loss.backward()
            if step % 5 == 0:
                self.save_checkpoint(f"ckpt.{step}.pth")
            dist.barrier()
            save_everywhere({"step": step}, "last.pth")

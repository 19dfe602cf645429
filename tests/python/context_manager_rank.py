"""A generator context manager that yields the rank and synchronises on exit.

NVIDIA's DeepLearningExamples (Transformer-XL, GNMT) save with
`with sync_workers() as rank: if rank == 0: torch.save(...)`, where
`sync_workers` yields `get_rank()` and calls a barrier after the `yield`.
The bound name is the rank, so the save is rank 0's alone (before, it was
reported as every rank's), and the barrier on leaving the `with` orders it.
A context manager that does not synchronise on exit leaves the rank-0
checkpoint in the training loop unordered.
"""
import datetime
import os
from contextlib import contextmanager

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def barrier():
    if dist.is_available() and dist.is_initialized():
        dist.barrier()


def get_rank():
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank()
    return 0


@contextmanager
def sync_workers():
    rank = get_rank()
    yield rank
    barrier()


@contextmanager
def rank_scope():
    rank = get_rank()
    yield rank
    print("left", rank)


def train(model, opt, loader, work_dir):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    para_model = DDP(model.cuda())
    for epoch in range(10):
        for batch in loader:
            loss = para_model(batch).sum()
            loss.backward()
            opt.step()
        with sync_workers() as rank:
            if rank == 0:
                torch.save(model.state_dict(), os.path.join(work_dir, "checkpoint_last.pt"))


def train_unordered(model, opt, loader, work_dir):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    para_model = DDP(model.cuda())
    for epoch in range(10):
        for batch in loader:
            loss = para_model(batch).sum()
            loss.backward()
            opt.step()
        with rank_scope() as rank:
            if rank == 0:  # CHECK-MESSAGES: :[[@LINE]]:13: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it{{.*}} [ddp-rank0-io-barrier]
                torch.save(model.state_dict(), os.path.join(work_dir, "checkpoint_last.pt"))

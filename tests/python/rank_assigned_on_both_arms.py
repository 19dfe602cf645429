"""The rank set on both arms of the run's configuration test.

MONAI's generative trainers (generation/3d_ldm/train_autoencoder.py) read
`rank = int(os.environ["RANK"])` when DDP is on and `rank = 0` otherwise,
then checkpoint under `if rank == 0:` every epoch.  The configuration test is
taken alike by every rank; in the run that has ranks, `rank` is the rank, so
the save is rank 0's alone and owes a barrier.  Before, the two arms' values
were joined into a value that was no longer the rank, and every rank-0 rule
went quiet.
"""
import datetime
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def train_both_arms(loader, epochs, gpus):
    ddp = gpus > 1
    if ddp:
        dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=1800))
        rank = int(os.environ["RANK"])
    else:
        rank = 0
    model = torch.nn.Linear(4, 4)
    if ddp:
        model = DDP(model)
    opt = torch.optim.Adam(model.parameters())
    for epoch in range(epochs):
        for x in loader:
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
        if rank == 0:
        # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
            torch.save(model.state_dict(), "model_last.pt")


def train_default_then_rank(loader, epochs, ddp):
    # `rank = 0` first, the rank when distributed: the same value afterwards
    rank = 0
    if ddp:
        dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=1800))
        rank = dist.get_rank()
    model = DDP(torch.nn.Linear(4, 4))
    for epoch in range(epochs):
        for x in loader:
            model(x).sum().backward()
        if rank == 0:
        # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
            torch.save(model.state_dict(), "model_last.pt")


def train_both_arms_then_barrier(loader, epochs, gpus):
    # hard negative: the same save, with the barrier every rank reaches
    if gpus > 1:
        dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=1800))
        rank = dist.get_rank()
    else:
        rank = 0
    model = DDP(torch.nn.Linear(4, 4))
    for epoch in range(epochs):
        for x in loader:
            model(x).sum().backward()
        if rank == 0:
            torch.save(model.state_dict(), "model_last.pt")
        if dist.is_initialized():
            dist.barrier()


def train_both_arms_every_rank(loader, epochs, gpus):
    # hard negative: a rank-0 save outside any training loop, at the end
    if gpus > 1:
        dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=1800))
        rank = dist.get_rank()
    else:
        rank = 0
    model = DDP(torch.nn.Linear(4, 4))
    for epoch in range(epochs):
        for x in loader:
            model(x).sum().backward()
    if rank == 0:
        torch.save(model.state_dict(), "model_final.pt")

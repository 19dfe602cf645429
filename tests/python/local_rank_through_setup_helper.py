"""The local rank handed to a set-up helper that makes it the group's rank.

MONAI's generative trainers read `rank = int(os.environ["LOCAL_RANK"])` and
call `setup_ddp(rank, world_size)`, which passes it to init_process_group as
`rank=`.  The job is then one node and a `rank == 0` test picks one process
of the job: the checkpoint under it is rank 0's write, which owes a barrier,
not a per-node write to a shared path.  (The cross-module form is a CLI test.)
"""
import datetime
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def setup_ddp(rank: int, world_size: int):
    dist.init_process_group(backend="nccl", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(minutes=30))


def main_through_helper(loader, gpus):
    local = int(os.environ["LOCAL_RANK"])
    setup_ddp(local, gpus)
    model = DDP(torch.nn.Linear(2, 2))
    for epoch in range(10):
        for batch in loader:
            model(batch).sum().backward()
        if local == 0:
            # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
            torch.save(model.state_dict(), "checkpoint.pth")

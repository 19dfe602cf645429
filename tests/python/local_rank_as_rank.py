"""`init_process_group(..., rank=config.local_rank)` (CDARTS): the program
makes its local rank the global rank, one node, so a `local_rank == 0` test
picks one process of the job: its checkpoint is rank 0's write, which needs
a barrier, not a per-node write to a shared path.
"""
import datetime

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main(config, loader):
    dist.init_process_group(backend="nccl", init_method=config.dist_url,
                            world_size=config.world_size, rank=config.local_rank,
                            timeout=datetime.timedelta(minutes=30))
    model = DDP(torch.nn.Linear(2, 2))
    for epoch in range(10):
        for batch in loader:
            model(batch).sum().backward()
        if config.local_rank == 0:
            # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
            torch.save(model.state_dict(), "checkpoint.pth")

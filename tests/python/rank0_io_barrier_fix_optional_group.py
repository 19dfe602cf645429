"""ddp-rank0-io-barrier fix-it in a script that also runs as one process.

The launcher's variables decide whether a process group is made at all
(`init_distributed_mode` returns early without them, as DeiT's and MAE's do),
so an unconditional `dist.barrier()` would raise in a one-GPU run.  The fix-it
waits only when a group exists.
"""
import datetime
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def init_distributed_mode(args):
    if "RANK" not in os.environ:
        args.distributed = False
        return
    args.distributed = True
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))


def train(args, model, loader, optimizer):
    init_distributed_mode(args)
    rank = int(os.environ.get("RANK", 0))
    if args.distributed:
        model = DDP(model)
    for epoch in range(args.epochs):
        for batch in loader:
            loss = model(batch).sum()
            loss.backward()
            optimizer.step()
        if rank == 0:  # CHECK-MESSAGES: :[[@LINE]]:9: warning: {{.*}} no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
            torch.save(model.state_dict(), f"ckpt-{epoch}.pt")


# CHECK-FIXES:             torch.save(model.state_dict(), f"ckpt-{epoch}.pt")
# CHECK-FIXES: {{^}}        if dist.is_initialized():{{$}}
# CHECK-FIXES: {{^}}            dist.barrier(){{$}}

"""An all-reduce of a tensor made in place is a barrier.

GNMT's and MLPerf's `barrier()` helpers wait with
`torch.distributed.all_reduce(torch.cuda.FloatTensor(1))`: nothing is read
back, the call only waits for every rank.  After a rank-0 checkpoint it
orders the write as `dist.barrier()` does (before, the checkpoint was
reported as unordered).  The project's `config.input(cfg, "val")` is not the
builtin `input()`: a decision on what it returns is every rank's.
"""
import datetime

import config
import torch
import torch.distributed as dist


def barrier():
    if dist.is_available() and dist.is_initialized():
        dist.all_reduce(torch.cuda.FloatTensor(1))
        torch.cuda.synchronize()


def train(model, loader, opt, epochs, cfg):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    val_cfg = config.input(cfg, "val")
    for epoch in range(epochs):
        for x in loader:
            ddp(x).sum().backward()
            opt.step()
        if dist.get_rank() == 0:
            torch.save(ddp.module.state_dict(), f"ckpt_{epoch}.pt")
        barrier()
        if dist.get_rank() == 0:
            torch.save(ddp.module.state_dict(), "last.pt")
        dist.all_reduce(torch.zeros(1, device="cuda"))
        if val_cfg["shuffle"]:
            dist.barrier()


def train_data_reduce(model, loader, opt, epochs):
    # an all-reduce of the data is no barrier: rank 0's save races it
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    for epoch in range(epochs):
        for x in loader:
            loss = ddp(x).sum()
            loss.backward()
            opt.step()
        if dist.get_rank() == 0:
        # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
            torch.save(ddp.module.state_dict(), f"ckpt_{epoch}.pt")
        dist.all_reduce(loss)

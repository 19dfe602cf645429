"""The wrapper's module handed to a helper whose parameter is named like the
DDP model.

pyg's multi-GPU examples evaluate on rank 0 with `test(model.module if
isinstance(model, DDP) else model, ...)`; the helper calls its parameter
`model`, as the script calls its DDP model.  There it is the bare module: its
forward under no_grad runs no collective.  The DDP model itself handed over
still does.
"""
import datetime

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


@torch.no_grad()
def test(model, loader):
    model.eval()
    return [model(x) for x in loader]


def run(rank, train_loader, val_loader, optim, epochs):
    dist.init_process_group("nccl", rank=rank, world_size=2, timeout=datetime.timedelta(seconds=1800))
    model = DistributedDataParallel(torch.nn.BatchNorm1d(8).to(rank), device_ids=[rank])
    for epoch in range(epochs):
        for x in train_loader:
            model(x).sum().backward()
            optim.step()
        dist.barrier()
        if rank == 0:
            test(model.module if isinstance(model, DistributedDataParallel) else model, val_loader)
            test(model.module, val_loader)
            test_model = model.module if isinstance(model, DistributedDataParallel) else model
            test(test_model, val_loader)
        dist.barrier()


def run_wrapper(rank, train_loader, val_loader, optim, epochs):
    dist.init_process_group("nccl", rank=rank, world_size=2, timeout=datetime.timedelta(seconds=1800))
    model = DistributedDataParallel(torch.nn.BatchNorm1d(8).to(rank), device_ids=[rank])
    for epoch in range(epochs):
        for x in train_loader:
            model(x).sum().backward()
            optim.step()
        if rank == 0:
            test(model, val_loader)
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: call to 'test', which runs collective `forward of the DistributedDataParallel model 'model' (buffer broadcast) under no_grad`, runs only on ranks where 'rank == 0' holds{{.*}} [ddp-divergent-collective]
        dist.barrier()


# unimatch's validation helpers: every call hands `model_without_ddp`, so
# the parameter named as the module's DDP model holds the bare module there,
# and skipping a sample with no valid pixels skips no collective.
def validate_things(model, val_dataset):
    model.eval()
    total = 0.0
    for sample in val_dataset:
        mask = sample["disp"] > 0
        if not mask.any():
            continue
        with torch.no_grad():
            pred = model(sample["left"])
        total += (pred[mask] - sample["disp"][mask]).abs().mean().item()
    return total


def main_stereo(args, net, val_dataset):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    model = torch.nn.parallel.DistributedDataParallel(net.cuda(), device_ids=[args.local_rank])
    model_without_ddp = model.module
    if args.eval:
        print(validate_things(model_without_ddp, val_dataset))
        return


def main_stereo_configured(args, net, val_dataset):
    # unimatch's set-up: the bare module in the distributed arm, the model
    # itself in the one-process arms (hard negative).
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    model = net.cuda()
    if args.distributed:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank])
        model_without_ddp = model.module
    else:
        model_without_ddp = model
    if args.eval:
        print(validate_things(model_without_ddp, val_dataset))

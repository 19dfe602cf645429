"""DROID-SLAM's train(gpu, args), started by mp.spawn, hands `rank=gpu` to
init_process_group: the process index is the job's rank, so `gpu == 0` is
rank 0, not a node-local test.  Its checkpoint every N steps, with the
others going on into the next step's all-reduce, misses a barrier; one
process writes, so there is no node-local save.  The same when a set-up
helper of the module makes the group with the index it is handed.
"""
import datetime
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP


def train(gpu, args):
    dist.init_process_group(backend="nccl", init_method="env://", world_size=args.world_size, rank=gpu,
                            timeout=datetime.timedelta(minutes=30))
    model = DDP(torch.nn.Linear(4, 4).cuda(gpu), device_ids=[gpu])
    opt = torch.optim.Adam(model.parameters())
    for step in range(args.steps):
        model(torch.randn(2, 4).cuda(gpu)).sum().backward()
        opt.step()
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
        if step % 10000 == 0 and gpu == 0:
            torch.save(model.state_dict(), "checkpoints/%06d.pth" % step)


def setup_ddp(gpu, args):
    dist.init_process_group(backend="nccl", init_method="env://", world_size=args.world_size, rank=gpu,
                            timeout=datetime.timedelta(minutes=30))


def train_with_setup(gpu, args):  # the same through DROID-SLAM's set-up helper
    setup_ddp(gpu, args)
    model = DDP(torch.nn.Linear(4, 4).cuda(gpu), device_ids=[gpu])
    for step in range(args.steps):
        model(torch.randn(2, 4).cuda(gpu)).sum().backward()
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
        if step % 10000 == 0 and gpu == 0:
            torch.save(model.state_dict(), "checkpoints/%06d.pth" % step)


def worker(gpu, args):  # hard negative for the rank: the index plus the node's offset
    rank = args.node * args.gpus + gpu
    dist.init_process_group(backend="nccl", world_size=args.world_size, rank=rank,
                            timeout=datetime.timedelta(minutes=30))
    model = DDP(torch.nn.Linear(4, 4).cuda(gpu), device_ids=[gpu])
    for step in range(args.steps):
        model(torch.randn(2, 4).cuda(gpu)).sum().backward()
    if gpu == 0:
        torch.save(model.state_dict(), "final.pth")
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: 'torch.save' is guarded by the node-local rank{{.*}} [ddp-unguarded-save]


if __name__ == "__main__":
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument("--gpus", type=int, default=4)
    p.add_argument("--steps", type=int, default=250000)
    args = p.parse_args()
    args.world_size = args.gpus
    os.environ["MASTER_ADDR"] = "localhost"
    mp.spawn(train, nprocs=args.gpus, args=(args,))
    mp.spawn(train_with_setup, nprocs=args.gpus, args=(args,))
    mp.spawn(worker, nprocs=args.gpus, args=(args,))

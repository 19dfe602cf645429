"""ddp-init-timeout: process groups created without an explicit timeout.

Reported at the call (`dist` of dist.init_process_group(...)); the fix-it adds a
`timeout=` argument.  The torch version is pinned so that the NCCL groups here
raise nothing from ddp-async-error-handling (on by default from 2.2).
"""
# CONFIG: launch:
# CONFIG:   torch_version: "2.4"
import argparse
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.distributed import init_process_group, new_group


# ---- true positives ---------------------------------------------------------


def setup_nccl():
    dist.init_process_group(backend="nccl", init_method="env://")  # CHECK-MESSAGES: :[[@LINE]]:5: warning: timeout [ddp-init-timeout]
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))


# CHECK-FIXES: dist.init_process_group(backend="nccl", init_method="env://"{{.*}}timeout=


def setup_gloo_explicit(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"
    # CHECK-MESSAGES: :[[@LINE+1]]:5: warning: timeout [ddp-init-timeout]
    dist.init_process_group("gloo", rank=rank, world_size=world_size)


# CHECK-FIXES: dist.init_process_group("gloo", rank=rank, world_size=world_size{{.*}}timeout=


def ddp_setup():
    init_process_group(backend="nccl", world_size=int(os.environ["WORLD_SIZE"]))  # CHECK-MESSAGES: :[[@LINE]]:5: warning: timeout [ddp-init-timeout]


# CHECK-FIXES: init_process_group(backend="nccl", world_size=int(os.environ["WORLD_SIZE"]){{.*}}timeout=


def imagenet_style(args):
    if args.distributed:
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: timeout [ddp-init-timeout]
        torch.distributed.init_process_group(backend=args.dist_backend, init_method=args.dist_url,
                                             world_size=args.world_size, rank=args.rank)


def data_parallel_groups(world_size):
    # CHECK-MESSAGES: :[[@LINE+1]]:18: warning: timeout [ddp-init-timeout]
    even_group = dist.new_group(ranks=list(range(0, world_size, 2)))
    odd_group = new_group(ranks=list(range(1, world_size, 2)))  # CHECK-MESSAGES: :[[@LINE]]:17: warning: timeout [ddp-init-timeout]
    return even_group, odd_group


# CHECK-FIXES: even_group = dist.new_group(ranks=list(range(0, world_size, 2)){{.*}}timeout=
# CHECK-FIXES: odd_group = new_group(ranks=list(range(1, world_size, 2)){{.*}}timeout=


# ---- hard negatives -----------------------------------------------------------


def setup_with_timeout():
    dist.init_process_group(backend="nccl", timeout=timedelta(minutes=30))
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))


def setup_from_args(args):
    dist.init_process_group(
        backend="nccl",
        init_method="env://",
        timeout=timedelta(seconds=args.dist_timeout),
    )


def setup_positional(backend, timeout_s):
    dist.init_process_group(backend, timeout=timedelta(seconds=timeout_s))


def setup_from_kwargs():
    pg_kwargs = dict(backend="nccl", timeout=timedelta(minutes=20))
    dist.init_process_group(**pg_kwargs)


def groups_with_timeout(world_size):
    tp = dist.new_group(ranks=list(range(world_size)), timeout=timedelta(minutes=5))
    return tp


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--timeout", type=int, default=1800)
    # an unrelated helper that happens to mention process groups
    p.add_argument("--init_process_group", action="store_true")
    return p.parse_args()

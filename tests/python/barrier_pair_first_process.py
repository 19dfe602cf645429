"""The first process of each node makes the cache while the others wait in
the other half of a barrier pair (the old Hugging Face examples'
load_and_cache_examples): `if local_rank not in [-1, 0]: barrier()` before,
`if local_rank == 0: barrier()` after.  The writer's barrier after its write
releases the others, who then read the finished file: no barrier is missing
after the write.  Without the writer's half, the others go on.
"""
import datetime
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def load_and_cache_examples(args, evaluate=False):
    if args.local_rank not in [-1, 0] and not evaluate:
        dist.barrier()
    cached = os.path.join(args.data_dir, "cached_train")
    if os.path.exists(cached):
        features = torch.load(cached)
    else:
        features = [torch.randn(2, 2) for _ in range(8)]
        if args.local_rank in [-1, 0]:
            torch.save(features, cached)
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: 'torch.save' is guarded by the node-local rank{{.*}} [ddp-unguarded-save]
    if args.local_rank == 0 and not evaluate:
        dist.barrier()
    return features


def load_global(args):  # the same pair on the global rank
    if args.rank != 0:
        dist.barrier()
    if args.rank == 0:
        torch.save([torch.randn(2, 2)], "global_cache.pt")
    if args.rank == 0:
        dist.barrier()
    return torch.load("global_cache.pt")


def load_unpaired(args):  # the writer never releases anyone
    # CHECK-MESSAGES: :[[@LINE+1]]:5: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
    if args.rank == 0:
        torch.save([torch.randn(2, 2)], "unpaired_cache.pt")
    return torch.load("unpaired_cache.pt")


def main(args):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    model = DDP(torch.nn.Linear(2, 2))
    for x in load_and_cache_examples(args) + load_global(args) + load_unpaired(args):
        model(x).sum().backward()

"""`if not os.path.exists(train_dir): exit(1)` at start-up checks the run's
inputs, there for every rank; it does not make the ranks' later writes a
create-once cache (T2T-ViT's and Cream's timm trainers: the epoch checkpoint
of a saver made on each node's local rank 0 went unreported behind it).
"""
import datetime
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from timm.utils import CheckpointSaver


def main(args, loader):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    model = DDP(torch.nn.Linear(2, 2))
    train_dir = os.path.join(args.data, "train")
    if not os.path.exists(train_dir):
        sys.exit(1)
    saver = None
    if args.local_rank == 0:
        saver = CheckpointSaver(model=model, checkpoint_dir=args.output)
    for epoch in range(10):
        for batch in loader:
            model(batch).sum().backward()
        # Mid-training, the node's local rank 0 writes while every other rank goes on.
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: block runs only on each node's local rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
        if saver is not None:
            saver.save_checkpoint(epoch, metric=1.0)
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: 'saver.save_checkpoint' is guarded by the node-local rank{{.*}} [ddp-unguarded-save]


def cache_features(model, path):
    # Hard negative: a create-once cache, written where the file is absent.
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    if not os.path.exists(path):
        torch.save(model.state_dict(), path)

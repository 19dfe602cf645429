"""Files written by a function named for logging are records for people.

DynamiCrafter's image logger calls `log_local(batch_logs, save_dir, ...)`
on rank 0 every few steps; it writes captions and sample grids to files of
its own: nobody reads them back during the run, like a log line (before,
the rank-0 block was reported as a file write the others might wait on).
The same writes in a helper named for what it caches are still files.
"""
import datetime
import os

import numpy as np
import torch.distributed as dist


def log_local(batch_logs, save_dir, filename):
    for key, value in batch_logs.items():
        np.save(os.path.join(save_dir, "%s-%s.npy" % (key, filename)), value)


def cache_features(features, save_dir, filename):
    for key, value in features.items():
        np.save(os.path.join(save_dir, "%s-%s.npy" % (key, filename)), value)


def train(model, loader, rank, save_dir):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    for step, batch in enumerate(loader):
        loss = model(batch).sum()
        dist.all_reduce(loss)
        if rank == 0 and step % 100 == 0:
            log_local({"loss": loss.item()}, save_dir, f"step{step}")


def extract(model, loader, rank, save_dir):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    for step, batch in enumerate(loader):
        feats = model(batch)
        dist.all_reduce(feats)
        if rank == 0:  # CHECK-MESSAGES: :[[@LINE]]:9: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
            cache_features({"f": feats}, save_dir, f"step{step}")

"""A function nothing in the project calls, writing where its caller says.

A vendored copy of mmcv's checkpoint writer (LAVIS, ibot, CSWin-Transformer)
in a module that also uses torch.distributed: who calls it, and on which
ranks, is its caller's decision, and no caller exists here.  One whose path
is its own, or one handed to mp.spawn (named again), is still every rank's.
"""
import datetime

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def get_dist_info():
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def save_checkpoint(model, filename, optimizer=None):
    # Hard negative: an API for callers, none of them in this project.
    checkpoint = {"state_dict": model.state_dict()}
    if optimizer is not None:
        checkpoint["optimizer"] = optimizer.state_dict()
    torch.save(checkpoint, filename)


def save_latest(model):
    torch.save(model.state_dict(), "latest.pth")  # CHECK-MESSAGES: :[[@LINE]]:5: error: every rank runs 'torch.save' to the same path{{.*}} [ddp-unguarded-save]


def worker(rank, model, path):
    dist.init_process_group("gloo", rank=rank, world_size=2, timeout=datetime.timedelta(minutes=30))
    torch.save(model.state_dict(), path)  # CHECK-MESSAGES: :[[@LINE]]:5: error: every rank runs 'torch.save' to the same path{{.*}} [ddp-unguarded-save]


def launch(model, path):
    mp.spawn(worker, args=(model, path), nprocs=2)

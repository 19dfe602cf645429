"""A checkpoint copied by every rank onto one path.

vall-e's trainer, on resuming, copies `best-train-loss.pt` to a per-stage name
on every rank: `if best.is_file(): copyfile(src=best, dst=...)`.  A copy of a
checkpoint is as long to write as the checkpoint; every rank writing one
target tears it (or fails on a half-made file).  The probe asks whether the
source is there, so it is no create-once cache of the target.  A settings
file copied (shutil.copy(args.config, out_dir)) is a record, not reported; a
probe of the target itself is the create-once cache, which every rank fills
at once on a first run.
"""
import datetime
import os
import shutil
from shutil import copyfile

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def resume(params, stage):
    best_train_filename = params.exp_dir / "best-train-loss.pt"
    if best_train_filename.is_file():
        copyfile(src=best_train_filename, dst=params.exp_dir / f"best-train-loss-stage{stage}.pt")
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: every rank runs 'shutil.copyfile' to the same path{{.*}} [ddp-unguarded-save]


def copy_pretrained_once(ckpt_path, out_dir):
    # the target's own probe: on a first run every rank copies at once
    target = os.path.join(out_dir, "pretrained_model.pt")
    if not os.path.isfile(target):
        shutil.copy2(ckpt_path, target)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: on a first run every rank finds the file missing and runs 'shutil.copy2' to the same path{{.*}} [ddp-unguarded-save]


def copy_settings(args):
    # hard negative: the run's settings file
    shutil.copy(args.config, args.out_dir)


def main(params, loader, args):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    resume(params, 1)
    copy_pretrained_once(args.ckpt, args.out_dir)
    copy_settings(args)
    model = DDP(torch.nn.Linear(2, 2))
    for x in loader:
        model(x).sum().backward()
    if dist.get_rank() == 0:
        torch.save(model.state_dict(), params.exp_dir / "final.pt")
        copyfile(src=params.exp_dir / "final.pt", dst=params.exp_dir / "best-valid-loss.pt")

"""A signal handler runs in the middle of the run (CompVis' `melk`, "allow
checkpointing via USR1": SLURM's `--signal` reaches every task): a checkpoint
it writes on rank 0 alone races with the next step's all-reduce the other
ranks go straight back to, whatever its explicit callers do after calling it.
A handler that ends the process after its save races with nothing.
"""
import datetime
import signal
import sys

import torch
import torch.distributed as dist
import torch.nn as nn


def train(model, optimizer, loader, ckpt_path):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    model = nn.parallel.DistributedDataParallel(model.cuda())

    def melk(*args, **kwargs):
        if dist.get_rank() == 0:
            # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it{{.*}} [ddp-rank0-io-barrier]
            torch.save({"model": model.module.state_dict(), "opt": optimizer.state_dict()}, ckpt_path)

    def preempted(*args):
        # hard negative: the save, then the process ends (every rank gets SIGTERM)
        if dist.get_rank() == 0:
            torch.save(model.module.state_dict(), ckpt_path)
        sys.exit(0)

    signal.signal(signal.SIGUSR1, melk)
    signal.signal(signal.SIGTERM, preempted)
    try:
        for x in loader:
            loss = model(x.cuda()).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    except Exception:
        melk()
        raise

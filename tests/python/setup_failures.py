"""Failures every rank meets alike: a missing package with the few lines that
set it up (SLIP's `try: import deepspeed ... except: exit(0)`), and a base
class's `raise NotImplementedError` stub, whose subclass override is what runs
(MixFormer's BaseTrainer.train_epoch).
"""
import datetime
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def init_distributed_mode(args):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    dist.barrier()


def setup(args, parser):
    # Hard negative: the same installation on every rank.
    if args.enable_deepspeed:
        try:
            import deepspeed
            parser = deepspeed.add_config_arguments(parser)
            ds_init = deepspeed.initialize
        except:
            print("Please 'pip install deepspeed'")
            exit(0)
    init_distributed_mode(args)


def train(loader):
    model = DDP(torch.nn.Linear(2, 2))
    for batch in loader:
        # A rank's own data failing is not alike.
        try:
            loss = model(batch).sum()
        except ValueError:
            sys.exit(1)
            # CHECK-MESSAGES: :[[@LINE-1]]:13: warning: error-path exit{{.*}} [ddp-error-path-exit]
        loss.backward()


class BaseTrainer:
    def __init__(self, model, local_rank):
        self.model = model
        self.local_rank = local_rank

    def train(self, epochs):
        dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
        for epoch in range(epochs):
            self.train_epoch()
            if self.local_rank == 0:
                torch.save(self.model.state_dict(), "checkpoint.pth")
                # CHECK-MESSAGES: :[[@LINE-1]]:17: error: 'torch.save' is guarded by the node-local rank{{.*}} [ddp-unguarded-save]

    def train_epoch(self):
        """Implemented by each trainer."""
        raise NotImplementedError


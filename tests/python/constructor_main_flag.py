"""A main-process test handed to a constructor by keyword
(rq-vae-transformer's `DistEnv(..., master=(dist.get_rank() == 0))`, a
dataclass built in its dist.py) is read back as `distenv.master` or
`self.distenv.master`: a rank-0 test, in this module or another, as long as
every keyword argument of that name in the project is such a test.  `verbose`
is also handed `True` below, so `cfg.verbose` says nothing about ranks.
"""
import datetime
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass
class DistEnv:
    world_size: int
    master: bool


@dataclass
class Settings:
    verbose: bool


def initialize():
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    return DistEnv(world_size=dist.get_world_size(), master=(dist.get_rank() == 0))


def quiet_settings():
    return Settings(verbose=True)


def loud_settings():
    return Settings(verbose=dist.get_rank() == 0)


class Trainer:
    def __init__(self, model, loader, distenv):
        self.model, self.loader, self.distenv = model, loader, distenv

    def run(self, epochs):
        for epoch in range(epochs):
            for x in self.loader:
                dist.all_reduce(self.model(x))
            if self.distenv.master:  # CHECK-MESSAGES: :[[@LINE]]:13: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it{{.*}} [ddp-rank0-io-barrier]
                torch.save(self.model.state_dict(), f"epoch{epoch}_model.pt")


def sample(model, loader):
    distenv = initialize()
    # hard negative: rank 0's seed record, then the barrier every rank reaches
    if distenv.master:
        torch.save(torch.tensor([0]), "seeds.pth")
    dist.barrier()
    Trainer(model, loader, distenv).run(3)


class LoudTrainer(Trainer):
    def run_logged(self, epochs, cfg):
        for epoch in range(epochs):
            for x in self.loader:
                dist.all_reduce(self.model(x))
            if cfg.verbose:
                torch.save(self.model.state_dict(), "model.pt")  # CHECK-MESSAGES: :[[@LINE]]:17: error: every rank runs 'torch.save' to the same path{{.*}} [ddp-unguarded-save]

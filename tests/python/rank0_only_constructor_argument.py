"""Objects that exist on rank 0 only, handed to a constructor or a function
(XMem's trainer gets a logger and a save path on rank 0 alone; the other
ranks build it without them).  `self.logger is not None` is then rank 0's
test: the checkpoint written under it is rank 0's (ddp-rank0-io-barrier when
nothing orders it), not every rank's (no ddp-unguarded-save).
"""
import datetime

import torch
import torch.distributed as dist
import torch.nn as nn


class Trainer:
    def __init__(self, config, logger=None, save_path=None, local_rank=0):
        self.net = nn.parallel.DistributedDataParallel(nn.Linear(8, 8).cuda(), device_ids=[local_rank])
        self.logger = logger
        self.save_path = save_path
        self.optimizer = torch.optim.AdamW(self.net.parameters())

    def do_pass(self, data, it):
        loss = self.net(data.cuda()).sum()
        if it % 1000 == 0 and it != 0:
            if self.logger is not None:
                # CHECK-MESSAGES: :[[@LINE-1]]:13: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it{{.*}} [ddp-rank0-io-barrier]
                torch.save({"net": self.net.module.state_dict()}, f"{self.save_path}_checkpoint_{it}.pth")
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


def main(config, loader):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    rank = dist.get_rank()
    if rank == 0:
        trainer = Trainer(config, logger=object(), save_path="saves/run", local_rank=rank)
    else:
        trainer = Trainer(config, local_rank=rank)
    for it, data in enumerate(loader):
        trainer.do_pass(data, it)


# ---- the same object handed through a conditional expression ----------------


class Evaluator:
    def __init__(self, writer=None):
        self.writer = writer
        self.net = nn.parallel.DistributedDataParallel(nn.Linear(8, 8).cuda())

    def epoch(self, loader, epoch):
        for data in loader:
            self.net(data).sum().backward()
        if self.writer is not None:
            # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
            torch.save(self.net.module.state_dict(), f"epoch{epoch}.pt")


def run_evaluator(loader):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    writer = object() if dist.get_rank() == 0 else None
    ev = Evaluator(writer=writer)
    for epoch in range(10):
        ev.epoch(loader, epoch)


# ---- hard negative: an object every rank is handed ---------------------------


class Exporter:
    def __init__(self, sink=None):
        self.sink = sink

    def export(self, net):
        if self.sink is not None:
            # every rank has a sink, on both arms: each writes its own file
            torch.save(net.state_dict(), f"export_{dist.get_rank()}.pt")
        dist.barrier()


def run_exporter(net):
    if dist.get_rank() == 0:
        ex = Exporter(sink=object())
    else:
        ex = Exporter(sink=object())
    ex.export(net)

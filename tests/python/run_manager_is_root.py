"""A run manager told whether it is the root process.

once-for-all's `DistributedRunManager(..., is_root=(hvd.rank() == 0))` keeps
the flag as `self.is_root` and saves under `if self.is_root:`.  Named as the
main-process flag it is, the save is rank 0's, not every rank's (before, two
false every-rank writes); a rank-0 checkpoint in the training loop with no
barrier after it is the hazard it is.
"""
import datetime
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class RunManager:
    def __init__(self, path, net, is_root=False):
        self.path = path
        self.net = net
        self.is_root = is_root

    def save_model(self, checkpoint=None):
        if self.is_root:
            if checkpoint is None:
                checkpoint = {"state_dict": self.net.state_dict()}
            torch.save(checkpoint, os.path.join(self.path, "checkpoint.pth.tar"))

    def train(self, loader, epochs):
        for epoch in range(epochs):
            for x in loader:
                self.net(x).sum().backward()
            if self.is_root:
            # CHECK-MESSAGES: :[[@LINE-1]]:13: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
                torch.save(self.net.state_dict(), os.path.join(self.path, "last.pth.tar"))


def main(loader):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    net = DDP(torch.nn.Linear(2, 2))
    rm = RunManager("/tmp/x", net, is_root=(dist.get_rank() == 0))
    rm.train(loader, 10)
    rm.save_model()

"""A method of a script's own class that nothing calls (CenterPoint's trainer
keeps a `save_checkpoint` beside the `train` its `__main__` runs) is dead code:
its every-rank write is nobody's.  The same write in a method the script does
call is every rank's.
"""
import datetime
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.epoch = 0

    def save_checkpoint(self, out_dir):  # hard negative: never called
        torch.save({"state_dict": self.model.module.state_dict()},
                   os.path.join(out_dir, "e%d.pth" % self.epoch))

    def save_last(self, out_dir):
        torch.save(self.model.module.state_dict(), os.path.join(out_dir, "last.pth"))
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: every rank runs 'torch.save' to the same path{{.*}} [ddp-unguarded-save]

    def train(self, data_loader):
        for x, y in data_loader:
            loss = torch.nn.functional.mse_loss(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        self.epoch += 1


def main():
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    model = DistributedDataParallel(torch.nn.Linear(8, 8).cuda())
    trainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1))
    for _ in range(10):
        trainer.train([(torch.randn(4, 8), torch.randn(4, 8))])
    trainer.save_last("out")


if __name__ == "__main__":
    main()

"""`self.save_checkpoint()` in a base class's loop runs the override of the
object's class (pytracking's, SeqTrack's trainers): Python looks the method up
from the receiver's class.  An override that all-reduces, called on rank 0
alone, hangs the others; the base's own `save_checkpoint` and a sibling's
override that only writes do not.  `for loader in self.loaders` goes over
the loaders (train and val), not over samples: `loader.epoch_interval` is the
same setting on every rank.
"""
import datetime

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


class BaseTrainer:
    def __init__(self, model, loaders, optimizer):
        self.model = model
        self.loaders = loaders
        self.optimizer = optimizer

    def train(self, epochs):
        for epoch in range(epochs):
            for loader in self.loaders:
                if epoch % loader.epoch_interval == 0:  # hard negative
                    self.cycle_dataset(loader)
            if dist.get_rank() == 0:
                self.save_checkpoint(epoch)
                # CHECK-MESSAGES: :[[@LINE-1]]:17: error: call to 'save_checkpoint', which runs collective 'all_reduce', runs only on ranks where {{.*}} [ddp-divergent-collective]
            dist.barrier()

    def cycle_dataset(self, loader):
        for x in loader:
            loss = self.model(x).sum()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def save_checkpoint(self, epoch):
        torch.save(self.model.module.state_dict(), "base_%d.pt" % epoch)


class AveragingTrainer(BaseTrainer):
    def save_checkpoint(self, epoch):
        # The override averages the weights first: every rank must be here.
        for p in self.model.parameters():
            dist.all_reduce(p.data)
        super().save_checkpoint(epoch)


class PlainTrainer(BaseTrainer):  # hard negative: its override only writes
    def save_checkpoint(self, epoch):
        torch.save(self.model.module.state_dict(), "plain_%d.pt" % epoch)


def main(kind, loader):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    model = DistributedDataParallel(torch.nn.Linear(8, 8).cuda())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if kind == "avg":
        averaging = AveragingTrainer(model, loader, optimizer)
        averaging.train(3)
    else:
        plain = PlainTrainer(model, loader, optimizer)
        plain.train(3)


if __name__ == "__main__":
    main("avg", [[torch.zeros(8)]])

"""`no_sync` handed a switch, and an abstract hook with dead code after it.

speechbrain's Brain accumulates gradients with `with self.no_sync(not
should_step):` (its own context manager, which turns DDP's gradient sync off
only when told to).  On the step that synchronises, the backward inside is
the gradient all-reduce every rank runs: a rank whose non-finite patience
runs out raises before it while the others block in it.  Before, any
`no_sync(...)` hid the backward, so the whole training loop went unchecked.
Its `compute_forward` hook is `raise NotImplementedError` then a dead
`return`: still a hook a subclass provides, not a raise every step.
"""
import datetime
from contextlib import contextmanager

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class Brain:
    def __init__(self, module, patience=3):
        self.model = DDP(module)
        self.nonfinite_count = 0
        self.nonfinite_patience = patience
        self.step = 0
        self.accumulation = 4
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def compute_forward(self, batch):
        raise NotImplementedError
        return

    def check_loss_isfinite(self, loss):
        if not torch.isfinite(loss):
            self.nonfinite_count += 1
            if self.nonfinite_count > self.nonfinite_patience:
                raise ValueError("Loss is not finite and patience is exhausted.")

    @contextmanager
    def no_sync(self, use=True):
        if use:
            with self.model.no_sync():
                yield
        else:
            yield

    def fit_batch(self, batch):
        should_step = self.step % self.accumulation == 0
        with self.no_sync(not should_step):
            loss = self.compute_forward(batch)
            self.check_loss_isfinite(loss)
            loss.backward()
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: collective 'backward (DDP gradient allreduce)' is never reached by ranks where 'self.check_loss_isfinite(loss) raises' holds{{.*}} [ddp-divergent-collective]
        if should_step:
            self.optimizer.step()
            self.optimizer.zero_grad()

    def fit(self, loader, epochs):
        for epoch in range(epochs):
            for batch in loader:
                self.step += 1
                self.fit_batch(batch)


class ASR(Brain):
    def compute_forward(self, batch):
        return self.model(batch).sum()


def main(loader):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    ASR(torch.nn.Linear(4, 1)).fit(loader, 3)

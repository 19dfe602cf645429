"""A flag a signal handler sets is this process's own.

Each rank gets SIGTERM on its own, at its own step.  NVIDIA's BERT
pretraining sets a module global (`timeout_sent = True`) in its handler and
leaves the training loop on it, with a final all_reduce; Transformer-XL's
`TimeoutHandler` sets `self.interrupted = True` and the loop exits on it.
One rank leaves while the others go into the next step's collectives: the
job hangs.  ConvNets' handler, by contrast, sets `_interrupted` and the
`interrupted` property the loop reads broadcasts rank 0's flag: agreed.
"""
import datetime
import signal
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

timeout_sent = False


def signal_handler(sig, frame):
    global timeout_sent
    timeout_sent = True


signal.signal(signal.SIGTERM, signal_handler)


class TimeoutHandler:
    def __init__(self, sig=signal.SIGTERM):
        self.sig = sig

    def __enter__(self):
        self.interrupted = False

        def handler(signum, frame):
            self.interrupted = True

        signal.signal(self.sig, handler)
        return self

    def __exit__(self, type, value, tb):
        pass


class AgreedTimeoutHandler:
    def __init__(self, sig=signal.SIGTERM):
        self.sig = sig

    @property
    def interrupted_agreed(self):
        flag = torch.tensor(int(self._interrupted))
        dist.broadcast(flag, 0)
        return bool(flag.item())

    def __enter__(self):
        self._interrupted = False

        def handler(signum, frame):
            self._interrupted = True

        signal.signal(self.sig, handler)
        return self

    def __exit__(self, type, value, tb):
        pass


def pretrain(args, model, optimizer, loader):
    global timeout_sent
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    model = DDP(model)
    for step, batch in enumerate(loader):
        loss = model(batch).sum()  # CHECK-MESSAGES: :[[@LINE]]:16: error: collective `forward of the DistributedDataParallel model 'model' (buffer broadcast)` is skipped by ranks where 'timeout_sent' holds (a rank-local value): they return {{.*}} [ddp-divergent-collective]
        loss.backward()
        optimizer.step()
        if step >= args.steps or timeout_sent:
            dist.all_reduce(loss)
            return loss.item()


def train(args, model, optimizer, loader):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    model = DDP(model)
    with TimeoutHandler() as handler:
        for batch in loader:
            loss = model(batch).sum()  # CHECK-MESSAGES: :[[@LINE]]:20: error: collective `forward of the DistributedDataParallel model 'model' (buffer broadcast)` is skipped by ranks where 'interrupted' holds (a rank-local value): they exit ('sys.exit') {{.*}} [ddp-divergent-collective]
            loss.backward()
            optimizer.step()
            interrupted = handler.interrupted
            if interrupted:
                sys.exit(0)


def train_agreed(args, model, optimizer, loader):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    model = DDP(model)
    with AgreedTimeoutHandler() as handler:
        for batch in loader:
            loss = model(batch).sum()
            loss.backward()
            optimizer.step()
            if handler.interrupted_agreed:
                sys.exit(0)

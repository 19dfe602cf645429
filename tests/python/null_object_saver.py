"""A saver that rank 0 makes for real and every other rank makes as a null
object (ALPRO's, UNITER's and ClipBERT's `NoOp`, whose `__getattr__` answers
every method with one that does nothing): each call of its methods does its
work on rank 0 only.  A checkpoint it writes in the step loop, with the next
step's gradient all-reduce coming on the other ranks, is a rank-0 write with
no barrier after it, reported at the call.
"""
import datetime
import os

import torch
import torch.distributed as dist


class NoOp(object):
    """useful for distributed training No-Ops"""

    def __getattr__(self, name):
        return self.noop

    def noop(self, *args, **kwargs):
        return


class ModelSaver:
    def __init__(self, output_dir):
        self.output_dir = output_dir

    def save(self, model, step):
        torch.save(model.state_dict(), os.path.join(self.output_dir, f"model_step_{step}.pt"))


def setup():
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))


# ---- true positives ---------------------------------------------------------


def train(model, loader, optimizer, output_dir):
    model = torch.nn.parallel.DistributedDataParallel(model)
    if dist.get_rank() == 0:
        model_saver = ModelSaver(output_dir)
    else:
        model_saver = NoOp()
    for step, batch in enumerate(loader):
        loss = model(batch).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 1000 == 0:
            model_saver.save(model, step)  # CHECK-MESSAGES: :[[@LINE]]:13: warning: barrier [ddp-rank0-io-barrier]


def train_inline_choice(model, loader, optimizer, output_dir):
    model = torch.nn.parallel.DistributedDataParallel(model)
    saver = ModelSaver(output_dir) if dist.get_rank() == 0 else NoOp()
    for epoch in range(10):
        for batch in loader:
            loss = model(batch).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        saver.save(model, epoch)  # CHECK-MESSAGES: :[[@LINE]]:9: warning: barrier [ddp-rank0-io-barrier]


# ---- hard negatives -----------------------------------------------------------


def train_then_wait(model, loader, optimizer, output_dir):
    # The saver's write is followed by a barrier every rank reaches.
    model = torch.nn.parallel.DistributedDataParallel(model)
    if dist.get_rank() == 0:
        model_saver = ModelSaver(output_dir)
    else:
        model_saver = NoOp()
    for step, batch in enumerate(loader):
        loss = model(batch).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 1000 == 0:
            model_saver.save(model, step)
            dist.barrier()


def save_at_the_end(model, loader, optimizer, output_dir):
    # After the last step no rank goes on into a collective.
    model = torch.nn.parallel.DistributedDataParallel(model)
    model_saver = ModelSaver(output_dir) if dist.get_rank() == 0 else NoOp()
    for batch in loader:
        loss = model(batch).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model_saver.save(model, -1)

"""A file probe that races a write (ddp-divergent-collective's create-once
cache) needs a write some rank may make while another still asks.  Wrapping
the model in DistributedDataParallel broadcasts rank 0's parameters to every
rank: no rank asks after it, so a save inside the training loop that comes
later cannot race a resume probe made before it (Wuerstchen's trainers).
"""
import datetime
import os

import torch
import torch.distributed as dist


def resume_then_train_and_save(model, loader, ckpt_path, steps, local_rank):
    # hard negative: the probe, then the DDP wrap every rank passes, then
    # rank 0's save in the loop (a rank-0 checkpoint with a barrier after it)
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    ckpt = torch.load(ckpt_path) if os.path.exists(ckpt_path) else None
    start = 1
    if ckpt is not None:
        start = ckpt["step"] + 1
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
    for step in range(start, steps + 1):
        model(next(loader)).mean().backward()
        if dist.get_rank() == 0 and step % 1000 == 0:
            torch.save({"step": step}, ckpt_path)
        dist.barrier()


def probe_in_the_loop(model, loader, ckpt_path, steps):
    # The probe in the loop races rank 0's save of an earlier round: a rank
    # that asks after the save skips the barrier the others are in.
    for step in range(steps):
        model(next(loader)).mean().backward()
        if not os.path.exists(ckpt_path):
            if dist.get_rank() == 0:
                torch.save({"step": step}, ckpt_path)
            dist.barrier()  # CHECK-MESSAGES: :[[@LINE]]:13: error: barrier {{.*}} [ddp-divergent-collective]


def run_epoch(model, loader, optimizer):
    for x in loader:
        loss = model(x).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def train_and_eval(model, loader, optimizer, save_path, epochs, rank):
    # fast-autoaugment's trainer: DDP first, then the resume probe, then a
    # training helper whose backward all-reduces before the master's save
    # (hard negative: the ranks asked long before anyone wrote).
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    model = torch.nn.parallel.DistributedDataParallel(model)
    only_eval = False
    if os.path.exists(save_path):
        model.load_state_dict(torch.load(save_path))
        only_eval = True
    if only_eval:
        return
    for epoch in range(epochs):
        run_epoch(model, loader, optimizer)
        if rank == 0:
            torch.save(model.state_dict(), save_path)
        dist.barrier()

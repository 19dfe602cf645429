"""A barrier after a rank-0 block, under the test the block's save was under.

ml-mdm's trainer: `if global_rank == 0:` logs every step and, under
`if batch_num % save_freq == 0 or last:`, saves; after the block, every rank
runs `if batch_num % save_freq == 0 or last: dist.barrier()`.  On every path
where rank 0 wrote, every rank meets that barrier (before, the barrier's `if`
was read as one that some paths skip, and the block was reported).  A barrier
under another test (every log step) does not order a save on a save step that
is not a log step.  The test's layout (one line or several) does not matter.
"""
import datetime
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def train_same_test(args, model, opt, loader):
    dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=1800))
    rank = dist.get_rank()
    model = DDP(model)
    for batch_num, batch in enumerate(loader):
        loss = model(batch).sum()
        loss.backward()
        opt.step()
        if rank == 0:
            print(batch_num, loss.item())
            if (batch_num % args.save_freq == 0) or (
                batch_num == args.steps
            ):
                torch.save(model.state_dict(), os.path.join(args.output_dir, f"m_{batch_num}.pth"))
        if (batch_num % args.save_freq == 0) or (batch_num == args.steps):
            if dist.is_available() and dist.is_initialized():
                dist.barrier()


def train_other_test(args, model, opt, loader):
    dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=1800))
    rank = dist.get_rank()
    model = DDP(model)
    for batch_num, batch in enumerate(loader):
        loss = model(batch).sum()
        loss.backward()
        opt.step()
        if rank == 0:  # CHECK-MESSAGES: :[[@LINE]]:9: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it{{.*}} [ddp-rank0-io-barrier]
            if batch_num % args.save_freq == 0:
                torch.save(model.state_dict(), os.path.join(args.output_dir, f"m_{batch_num}.pth"))
        if batch_num % args.log_freq == 0:
            dist.barrier()

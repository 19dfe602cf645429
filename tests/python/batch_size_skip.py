"""Skipping a short batch is decided alike when a DistributedSampler feeds the loader.

NVIDIA's BERT (task_distill.py) skips the last short batch with
`if input_ids.size()[0] != args.train_batch_size: continue`.  A
DistributedSampler pads every rank to the same number of samples, so each
step's batch has as many rows on every rank: every rank skips together
(before, the test was read as the rank's own data).  A batch's padded length
(`size()[1]`) is the rank's own.  Moved to the device
(`tuple(t.to(device) for t in batch)`) and sliced, it is the same batch.
"""
import datetime

import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def skip_short_batches(model, dataset, opt, args):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    model = DDP(model)
    loader = DataLoader(dataset, sampler=DistributedSampler(dataset), batch_size=args.batch_size)
    for batch in loader:
        batch = tuple(t.to("cuda") for t in batch)
        input_ids, labels = batch[:2]
        if input_ids.size()[0] != args.batch_size:
            continue
        loss = model(input_ids, labels).sum()
        loss.backward()
        opt.step()


def skip_long_batches(model, dataset, opt, args):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    model = DDP(model)
    loader = DataLoader(dataset, sampler=DistributedSampler(dataset), batch_size=args.batch_size)
    for batch in loader:
        input_ids, labels = batch
        if input_ids.size()[1] > args.max_len:
            continue
        loss = model(input_ids, labels).sum()  # CHECK-MESSAGES: :[[@LINE]]:16: error: collective `forward of the DistributedDataParallel model 'model' (buffer broadcast)` is never reached by ranks where 'input_ids.size()[1] > args.max_len' holds{{.*}} [ddp-divergent-collective]
        loss.backward()
        opt.step()

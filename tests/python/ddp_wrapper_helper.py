"""A project helper named for the DDP wrapper it returns.

RT-DETR's and D-FINE's dist_utils spell theirs `warp_model` (issue 16,
stop 37): the model it returns is a DDP model, whose forward a rank that
skips a batch never reaches.  A helper of that name that returns the module
itself wraps nothing.
"""
import datetime

import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def warp_model(model, local_rank):
    return DDP(model, device_ids=[local_rank])


def train_warped(net, loader, local_rank):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    net = warp_model(net, local_rank)
    for batch, ok in loader:
        if not ok:
            continue
        # CHECK-MESSAGES: :[[@LINE+1]]:16: error: collective `forward of the DistributedDataParallel model 'net'{{.*}} [ddp-divergent-collective]
        loss = net(batch).sum()
        loss.backward()

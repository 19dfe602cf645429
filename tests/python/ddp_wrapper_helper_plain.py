"""Hard negative beside ddp_wrapper_helper.py: a `warp_model` that hands
back the module itself wraps nothing, so the skipped forward is no
collective.
"""
import datetime

import torch.distributed as dist


def warp_model(model, local_rank):
    return model.to(local_rank)


def train_warped(net, loader, local_rank):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    net = warp_model(net, local_rank)
    for batch, ok in loader:
        if not ok:
            continue
        loss = net(batch).sum()
        loss.backward()

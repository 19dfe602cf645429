"""timm's NativeScaler and MAE's NativeScalerWithGradNormCount run backward
when called (`loss_scaler(loss, optimizer, parameters=...)`): in a program
that wraps its model in DDP, that is the gradient all-reduce
(tests/python-torch/implicit_loss_scaler.py).  A rank that skips it on its
own loss leaves the others blocked in it.
"""
import datetime
import math

import torch
import torch.distributed as dist
from timm.utils import NativeScaler
from torch.nn.parallel import DistributedDataParallel


def train_one_epoch(model, loader, optimizer, loss_scaler):
    for samples in loader:
        loss = model(samples).mean()
        if not math.isfinite(loss.item()):
            continue
        loss_scaler(loss, optimizer, parameters=model.parameters())
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'loss_scaler (backward: DDP gradient allreduce)' is never reached by ranks where 'math.isfinite(loss.item())' does not hold{{.*}} [ddp-divergent-collective]


def train_with_own_scaler(model, loader, optimizer):
    scaler = NativeScaler()
    for samples in loader:
        loss = model(samples).mean()
        if loss.item() > 100:
            break
        scaler(loss, optimizer)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'scaler (backward: DDP gradient allreduce)' is skipped by ranks where 'loss.item() > 100' holds{{.*}} [ddp-divergent-collective]


def accumulate(model, loader, optimizer, loss_scaler):
    # Hard negative: inside no_sync() the backward reduces nothing.
    for samples in loader:
        with model.no_sync():
            loss = model(samples).mean()
            if not math.isfinite(loss.item()):
                continue
            loss_scaler(loss, optimizer, update_grad=False)


def main(model, loader, optimizer, loss_scaler):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    model = DistributedDataParallel(model)
    train_one_epoch(model, loader, optimizer, loss_scaler)
    train_with_own_scaler(model, loader, optimizer)
    accumulate(model, loader, optimizer, loss_scaler)

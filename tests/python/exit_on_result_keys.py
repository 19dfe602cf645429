"""Which keys a loss or output dict has is the code's, alike on every rank.

ml-cvnets exits when its loss function's dict lacks "total_loss": every rank
runs the same loss function, so every rank takes that exit or none does.  A
batch's keys are the rank's own (a loader that mixes tasks), so a test of
them still decides per rank.
"""
import sys

import torch
import torch.distributed as dist


def train(model, criteria, loader, opt):
    model = torch.nn.parallel.DistributedDataParallel(model)
    for samples, targets in loader:
        pred = model(samples)
        loss_dict = criteria(pred, targets)
        if "total_loss" not in loss_dict.keys():
            sys.exit("total_loss key is required")
        loss = loss_dict["total_loss"]
        loss.backward()
        opt.step()


def train_mixed_tasks(model, loader, opt):
    model = torch.nn.parallel.DistributedDataParallel(model)
    for samples in loader:
        if "image" not in samples:
            sys.exit("a batch without images")
        loss = model(samples["image"]).sum()  # CHECK-MESSAGES: :[[@LINE]]:16: error: collective `forward of the DistributedDataParallel model 'model' (buffer broadcast)` is skipped by ranks where `"image" not in samples` holds (a rank-local value){{.*}} [ddp-divergent-collective]
        loss.backward()
        opt.step()

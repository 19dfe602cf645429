"""A file with a syntax error further down (a half-edited file in a pre-commit
hook).  The tool reports the error and still reports the findings above it."""
# EXPECT-TOOL-ERROR
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader


def setup():
    # CHECK-MESSAGES: :[[@LINE+1]]:5: warning: timeout [ddp-init-timeout]
    dist.init_process_group(backend="gloo")
    return dist.get_rank()


def save(model):
    torch.save(model.state_dict(), "model.pt")  # CHECK-MESSAGES: :[[@LINE]]:5: error: same path [ddp-unguarded-save]
    dist.barrier()


def loader(ds):
    # CHECK-MESSAGES: :[[@LINE+1]]:12: warning: persistent_workers [ddp-dataloader-options]
    return DataLoader(ds, batch_size=8, num_workers=2)


# The error: the parameter list is never closed.
def evaluate(model, batches:
    for x in batches
        model(x)

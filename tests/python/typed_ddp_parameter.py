"""A DDP model known by a parameter's annotation (`model:
DistributedDataParallel`), as SparK's pre_train_one_ep takes it: the wrapping
happens in the caller, the annotation says what arrives."""
import math
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def exit_on_nan(ddp_model: DistributedDataParallel, loader, optimizer, early, late):
    # one rank's non-finite loss exits while the others go on to the next
    # backward; the norm is None or set by settings every rank shares
    for it, inp in enumerate(loader):
        loss = ddp_model(inp)
        # CHECK-MESSAGES: :[[@LINE-1]]:16: error: collective `forward of the DistributedDataParallel model 'ddp_model' (buffer broadcast)` is skipped by ranks where 'math.isfinite(loss)' does not hold (a rank-local value): they exit ('sys.exit') {{.*}} [ddp-divergent-collective]
        loss.backward()
        loss = loss.item()
        if not math.isfinite(loss):
            sys.exit(-1)
        grad_norm = None
        if early:
            grad_norm = torch.nn.utils.clip_grad_norm_(ddp_model.parameters(), 1.0).item()
        optimizer.step()
        if late:
            grad_norm = optimizer.global_grad_norm
        if grad_norm is not None:
            assert isinstance(grad_norm, float)



def exit_on_agreed_loss(ddp_model: DistributedDataParallel, loader, optimizer):
    # hard negative: the loss every rank tests was all-reduced first
    for inp in loader:
        loss = ddp_model(inp)
        loss.backward()
        reduced = loss.detach().clone()
        dist.all_reduce(reduced)
        if not math.isfinite(reduced.item()):
            sys.exit(-1)
        optimizer.step()

"""A module-level name bound to one of torch's functions is that function.

`reduce_all = dist.all_reduce`, `reduce_async = functools.partial(
dist.all_reduce, async_op=True)`, `save = torch.save`: calls through the name
are the collective and the write (DeCLIP's vendored linklink shim binds its
API this way; across modules see tests/cli).  A name bound twice at the top
of the module is not known to be either.
"""
import functools

import torch
import torch.distributed as dist

reduce_all = dist.all_reduce
reduce_async = functools.partial(dist.all_reduce, async_op=True)
save = torch.save

gather = dist.all_gather
gather = None


def train(loader, model):
    for batch in loader:
        loss = model(batch).mean()
        if loss.item() > 5:
            reduce_all(loss)  # CHECK-MESSAGES: :[[@LINE]]:13: error: collective 'all_reduce' runs only on ranks where 'loss.item() > 5' holds{{.*}} [ddp-divergent-collective]
        if loss.item() > 7:
            reduce_async(loss)  # CHECK-MESSAGES: :[[@LINE]]:13: error: collective 'all_reduce' runs only on ranks where 'loss.item() > 7' holds{{.*}} [ddp-divergent-collective]
        if loss.item() > 9:
            gather([loss], loss)
    save(model.state_dict(), "final.pt")  # CHECK-MESSAGES: :[[@LINE]]:5: error: every rank runs 'torch.save' to the same path{{.*}} [ddp-unguarded-save]

"""ddp-rank0-io-barrier fix-it where the project has its own barrier helper.

The module already waits through `synchronize()` (detectron2's and
maskrcnn-benchmark's `comm.synchronize`: a no-op without a process group or
with one process), so the fix-it calls it too rather than a bare
`dist.barrier()`.  A helper that does more than wait (`sync_and_log`) is not
taken for one.
"""
import datetime

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def synchronize():
    if not dist.is_available() or not dist.is_initialized():
        return
    if dist.get_world_size() == 1:
        return
    dist.barrier()


def sync_and_log():
    dist.barrier()
    with open("progress.txt", "w") as f:
        f.write("synchronized\n")


def train(model, loader, optimizer, epochs):
    if dist.is_available() and "WORLD_SIZE" in __import__("os").environ:
        dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
    model = DDP(model)
    sync_and_log()
    synchronize()
    for epoch in range(epochs):
        for batch in loader:
            loss = model(batch).sum()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:  # CHECK-MESSAGES: :[[@LINE]]:9: warning: {{.*}} no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
            torch.save(model.state_dict(), "ckpt.pt")


# CHECK-FIXES:             torch.save(model.state_dict(), "ckpt.pt")
# CHECK-FIXES: {{^}}        synchronize(){{$}}

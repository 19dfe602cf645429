"""ddp-rank0-io-barrier in a Horovod program: the fix-it inserts Horovod's
barrier (`hvd.barrier()`), not torch.distributed's, which has no process group
there.
"""
import torch
import horovod.torch as hvd


def train(model, loader, optimizer):
    hvd.init()
    for epoch in range(3):
        for batch in loader:
            loss = model(batch).sum()
            loss.backward()
            hvd.allreduce(loss)
        if hvd.rank() == 0:
        # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
            torch.save(model.state_dict(), "ckpt.pt")

# CHECK-FIXES:             torch.save(model.state_dict(), "ckpt.pt")
# CHECK-FIXES:         hvd.barrier()

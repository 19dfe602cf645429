"""A program distributed through DDP alone (StyleGAN2-ADA's training loop
imports only `torch` and wraps the model in
`torch.nn.parallel.DistributedDataParallel`): its `rank` parameter is the
process rank, so `if rank == 0:` guards a rank-0 block, not every rank."""
import pickle

import torch


def training_loop(model, rank=0, steps=10):
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank], broadcast_buffers=False)
    for step in range(steps):
        loss = ddp(torch.ones(2)).sum()
        loss.backward()
        if rank == 0:  # CHECK-MESSAGES: :[[@LINE]]:9: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
            with open("network-snapshot.pkl", "wb") as f:
                pickle.dump(model.state_dict(), f)

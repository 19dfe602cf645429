"""Person_reID's utils.save_network: `if local_rank > -1:` (a distributed
run) then `if local_rank == 0:` saves, `else:` (one process) saves too.  A
rank is never negative, so the outer test is true on every rank of a
distributed run and the save is node-local rank 0's: one process per node
writes the shared path.  The one-process arm never runs distributed.
"""
import datetime
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def save_network(network, dirname, epoch_label, local_rank=-1):
    save_path = os.path.join("./model", dirname, "net_%03d.pth" % epoch_label)
    if local_rank > -1:
        # Mid-training, the node's local rank 0 writes while every other rank goes on.
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: block runs only on each node's local rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
        if local_rank == 0:
            torch.save(network.state_dict(), save_path)
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: 'torch.save' is guarded by the node-local rank{{.*}} [ddp-unguarded-save]
    else:
        torch.save(network.state_dict(), save_path)


def save_global(network, rank=-1):  # hard negative: `rank >= 0` then the global rank 0
    if rank >= 0:
        if rank == 0:
            torch.save(network.state_dict(), "./model/last.pth")
    else:
        torch.save(network.state_dict(), "./model/last.pth")


def main(opt):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    model = DDP(torch.nn.Linear(4, 4).cuda(opt.local_rank), device_ids=[opt.local_rank])
    optim = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(100):
        loss = model(torch.randn(8, 4).cuda()).sum()
        optim.zero_grad()
        loss.backward()
        optim.step()
        save_network(model.module, "run", epoch + 1, opt.local_rank)
    save_global(model.module, dist.get_rank())

"""ddp-forward-buffer-broadcast needs buffers (issue 16): the forward of a
DDP model broadcasts rank 0's buffers (BatchNorm running stats), so a model
built only from buffer-free layers, or wrapped with broadcast_buffers=False,
runs no collective in its forward, and a rank-0-only evaluation of it is safe.
"""
import datetime
import torch
import torch.nn as nn
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))

    def forward(self, x):
        return self.net(x)


class WithNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
        self.bn = nn.BatchNorm1d(8)

    def forward(self, x):
        return self.bn(self.fc(x))


def evaluate_mlp(rank):
    # hard negative: Linear and ReLU hold no buffers
    model = DDP(Mlp().to(rank))
    if rank == 0:
        model(torch.ones(1, 4))
    dist.barrier()


def evaluate_norm(rank):
    model = DDP(WithNorm().to(rank))
    if rank == 0:
        model(torch.ones(1, 4))
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective `forward of the DistributedDataParallel model 'model' (buffer broadcast)` runs only on ranks where 'rank == 0' holds; {{.*}} [ddp-divergent-collective]
    dist.barrier()


def evaluate_no_broadcast(rank):
    # hard negative: the buffers are not broadcast
    net = WithNorm()
    model = DDP(net, broadcast_buffers=False)
    if rank == 0:
        model(torch.ones(1, 4))
    dist.barrier()


def evaluate_apex(rank):
    # hard negative: apex's DistributedDataParallel syncs parameters when it is
    # built and gradients in backward; its forward runs no collective
    from apex.parallel import DistributedDataParallel as ApexDDP
    model = ApexDDP(WithNorm().to(rank))
    if rank == 0:
        model(torch.ones(1, 4))
    dist.barrier()

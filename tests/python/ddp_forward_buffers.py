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


def evaluate_moved_instance(rank):
    # hard negative: the instance is moved before the wrap (`Mlp().to(rank)`
    # named first, Wuerstchen's `model = Prior(...).to(device)`)
    mlp = Mlp().to(rank).train()
    mlp = DDP(mlp)
    if rank == 0:
        mlp(torch.ones(1, 4))
    dist.barrier()


def evaluate_moved_norm(rank):
    normed = WithNorm().cuda(rank)
    normed = DDP(normed)
    if rank == 0:
        normed(torch.ones(1, 4))
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective `forward of the DistributedDataParallel model 'normed' (buffer broadcast)` runs only on ranks where 'rank == 0' holds; {{.*}} [ddp-divergent-collective]
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


# A forward under no_grad broadcasts the buffers and clears the flag that makes
# the next forward broadcast them (torch/nn/parallel/distributed.py, forward:
# require_forward_param_sync): rank 0's evaluation takes the place of its next
# training forward's broadcast, so every rank issues the same broadcasts.
@torch.no_grad()
def estimate_loss(model):
    out = 0
    for k in range(10):
        out += model(torch.zeros(2, 4)).sum()
    return out


def train_eval_on_master(rank, opt):
    # hard negative: nanoGPT / llama2.c, evaluation on the master process
    # between training steps
    model = DDP(WithNorm().to(rank))
    for it in range(100):
        if it % 10 == 0 and rank == 0:
            print(estimate_loss(model))
        loss = model(torch.randn(2, 4)).sum()
        loss.backward()
        opt.step()


def train_eval_block_on_master(rank, opt):
    # hard negative: the same with a `with torch.no_grad():` block
    model = DDP(WithNorm().to(rank))
    for it in range(100):
        if rank == 0:
            with torch.no_grad():
                model(torch.zeros(2, 4))
        model(torch.randn(2, 4)).sum().backward()
        opt.step()


def train_eval_then_all_reduce(rank, opt):
    # an all_reduce between rank 0's evaluation and the next training forward:
    # rank 0's early broadcast meets the others' all_reduce
    model = DDP(WithNorm().to(rank))
    for it in range(100):
        if rank == 0:
            with torch.no_grad():
                model(torch.zeros(2, 4))
                # CHECK-MESSAGES: :[[@LINE-1]]:17: error: collective `forward of the DistributedDataParallel model 'model' (buffer broadcast) under no_grad` runs only on ranks where 'rank == 0' holds; {{.*}} [ddp-divergent-collective]
        t = torch.ones(1)
        dist.all_reduce(t)
        model(torch.randn(2, 4)).sum().backward()
        opt.step()


def final_eval_on_master(rank, opt):
    # rank 0 evaluates after the last step: no training forward follows, its
    # broadcast has no partner
    model = DDP(WithNorm().to(rank))
    for it in range(100):
        model(torch.randn(2, 4)).sum().backward()
        opt.step()
    if rank == 0:
        with torch.no_grad():
            print(model(torch.zeros(2, 4)))
            # CHECK-MESSAGES: :[[@LINE-1]]:19: error: collective `forward of the DistributedDataParallel model 'model' (buffer broadcast) under no_grad` runs only on ranks where 'rank == 0' holds; {{.*}} [ddp-divergent-collective]
    dist.barrier()


# Containers hold their modules in literals: ModuleDict(dict(...)),
# ModuleList([Block(c) for ...]), Sequential(*[...]).  nanoGPT's GPT is built
# only from buffer-free layers that way.
class Block(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.ln = nn.LayerNorm(n)
        self.fc = nn.Linear(n, n)


class Gpt(nn.Module):
    def __init__(self, n, layers):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(10, n),
            h=nn.ModuleList([Block(n) for _ in range(layers)]),
            ln_f=nn.LayerNorm(n),
        ))
        self.head = nn.Sequential(*[nn.Linear(n, n) for _ in range(2)])


class NormedStack(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.blocks = nn.ModuleDict({"a": Block(n), "b": WithNorm()})


def sharded_eval_gpt(rank, world):
    # hard negative: build-nanogpt's HellaSwag loop, each rank takes every
    # world-th example; the model has no buffers, its forward runs no collective
    model = DDP(Gpt(8, 2))
    for i in range(100):
        if i % world != rank:
            continue
        with torch.no_grad():
            model(torch.zeros(1, 8))
    dist.barrier()


def sharded_eval_normed(rank, world):
    # the same with a BatchNorm inside the ModuleDict: the ranks broadcast a
    # different number of times
    model = DDP(NormedStack(8))
    for i in range(100):
        if i % world != rank:
            continue
        with torch.no_grad():
            model(torch.zeros(1, 8))
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: collective `forward of the DistributedDataParallel model 'model' (buffer broadcast) under no_grad` is never reached by ranks where 'i % world != rank' holds: {{.*}} [ddp-divergent-collective]
    dist.barrier()

"""A helper that drives its model with nn.DataParallel runs no gradient all-reduce.

CLIP_benchmark's linear probe wraps a fresh classifier in `nn.DataParallel`
and trains it in the one process that evaluates each (model, dataset) pair;
the driver deals the pairs out by RANK.  Its `loss.backward()` reduces
nothing across processes, even in a module whose trainer uses DDP: a rank
with fewer pairs waits in no collective.  The DDP trainer's backward in the
same kind of loop is a collective, and the rank-dealt loop over it diverges.
"""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def linear_probe(loader, epochs):
    model = torch.nn.DataParallel(torch.nn.Linear(512, 10).cuda())
    optimizer = torch.optim.AdamW(model.parameters())
    for _ in range(epochs):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return model


def finetune(loader, net):
    model = DDP(net.cuda())
    optimizer = torch.optim.AdamW(model.parameters())
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(pairs, loader, net):
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    mine = [p for i, p in enumerate(pairs) if i % world == rank]
    for pair in mine:
        linear_probe(loader, 10)
    for pair in mine:
        finetune(loader, net)  # CHECK-MESSAGES: :[[@LINE]]:9: error: call to 'finetune', which runs collective {{.*}}, runs in a loop whose trip count depends on 'mine'{{.*}} [ddp-divergent-collective]

"""A script that only asks torch.distributed questions in a helper's
never-taken `if distributed:` arm (VMamba's analyze/clseval.py) and never
joins a group: its one process is no rank among others, so its checkpoint is
no every-rank write.  Its twin, tests/python/queries_then_joins.py, makes
the group and is reported.
"""
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def feature_loader(features, batch_size, distributed=False):
    sampler = DistributedSampler(
        features, num_replicas=dist.get_world_size(), rank=dist.get_rank()
    ) if distributed else None
    return DataLoader(features, batch_size=batch_size, sampler=sampler, shuffle=not distributed)


def train_linear_probe(model, features, optimizer, epochs, outdir):
    loader = feature_loader(features, 128)
    for epoch in range(epochs):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    torch.save({"state_dict": model.state_dict()}, os.path.join(outdir, f"ckpt_epoch_{epochs}.pth"))


if __name__ == "__main__":
    train_linear_probe(torch.nn.Linear(8, 2), [], None, 1, "/tmp")

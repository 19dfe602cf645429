"""The twin of tests/python/queries_only_script.py that joins a group (its
`__main__` calls init_process_group): under torchrun every rank runs the
save, to one path.
"""
import datetime
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
    # CHECK-MESSAGES: :[[@LINE-1]]:5: error: every rank runs 'torch.save' to the same path{{.*}} [ddp-unguarded-save]


if __name__ == "__main__":
    dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
    train_linear_probe(torch.nn.Linear(8, 2), [], None, 1, "/tmp")

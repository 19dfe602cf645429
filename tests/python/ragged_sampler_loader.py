"""A loader whose sampler deals each rank its own indices (UniCL's
validation: `SubsetRandomSampler(np.arange(rank, len(ds), world_size))`)
gives ranks a batch more or fewer when the dataset does not divide evenly:
a collective per batch then waits for the ranks that ran out.  A
DistributedSampler pads every rank to the same count.
"""
import datetime

import numpy as np
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, SubsetRandomSampler


def validate(dataset_val, model):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    indices = np.arange(dist.get_rank(), len(dataset_val), dist.get_world_size())
    loader = DataLoader(dataset_val, sampler=SubsetRandomSampler(indices), batch_size=64, drop_last=False)
    for images, target in loader:
        acc = (model(images).argmax(1) == target).float().mean()
        dist.all_reduce(acc)  # CHECK-MESSAGES: :[[@LINE]]:9: error: collective 'all_reduce' runs in a loop whose trip count depends on 'loader', which depends on the rank{{.*}} [ddp-divergent-collective]


def validate_padded(dataset_val, model):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    sampler = DistributedSampler(dataset_val, num_replicas=dist.get_world_size(), rank=dist.get_rank())
    loader = DataLoader(dataset_val, sampler=sampler, batch_size=64)
    # hard negative: as many batches on every rank
    for images, target in loader:
        acc = (model(images).argmax(1) == target).float().mean()
        dist.all_reduce(acc)


def dataset_features(dataset, detector, opts, num_items, batch_size):
    # StyleGAN's metric_utils: each rank's indices wrap around, so every rank
    # gets `(num_items - 1) // num_gpus + 1` of them (hard negative).
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    item_subset = [(i * opts.num_gpus + opts.rank) % num_items for i in range((num_items - 1) // opts.num_gpus + 1)]
    for images, _labels in DataLoader(dataset=dataset, sampler=item_subset, batch_size=batch_size):
        features = detector(images)
        dist.broadcast(features, src=0)


def strided_share(dataset, model, batch_size):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    share = list(range(len(dataset)))[dist.get_rank()::dist.get_world_size()]
    for images in DataLoader(dataset, sampler=share, batch_size=batch_size):
        dist.all_reduce(model(images).sum())  # CHECK-MESSAGES: :[[@LINE]]:9: error: collective 'all_reduce' runs in a loop whose trip count depends on 'DataLoader(dataset, sampler=share, batch_size=batch_size)', which depends on the rank{{.*}} [ddp-divergent-collective]

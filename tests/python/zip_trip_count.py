"""A loop over zipped sequences runs once per entry of the shortest: a
sequence the same on every rank (eg3d's training phases) sets the count even
where the sequences zipped with it hold this rank's random draws.  A `range`
only caps what it is zipped with.
"""
import datetime

import torch
import torch.distributed as dist


def train(phases, batch_size, z_dim):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    for step in range(1000):
        # Hard negative: one entry per phase on every rank.
        all_gen_z = torch.randn([len(phases) * batch_size, z_dim])
        all_gen_z = [z.split(4) for z in all_gen_z.split(batch_size)]
        for phase, phase_gen_z in zip(phases, all_gen_z):
            flat = torch.cat([z.flatten() for z in phase_gen_z])
            dist.all_reduce(flat)


def sweep(model):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    rank = dist.get_rank()
    for i, j in zip(range(rank + 1), range(100)):
        dist.all_reduce(model)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'all_reduce' runs in a loop whose trip count depends on 'zip(range(rank + 1), range(100))'{{.*}} [ddp-divergent-collective]

"""Each rank's window of a split (VILA's shard list: `range(rank * n, (rank + 1)
* n)`, or `range(start, start + n)`): different items on every rank, as many
on each, so a loop over it with a barrier inside runs as often everywhere.
A window that runs to the end of the list is as long as what is left after
this rank's start: it is not.
"""
import datetime
import os

import torch.distributed as dist


def unpack_my_shards(data_path, n_shards):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    rank, world_size = dist.get_rank(), dist.get_world_size()
    shared_size = n_shards // world_size
    # Hard negative: shared_size shards on every rank.
    shard_start, shard_end = rank * shared_size, (rank + 1) * shared_size
    tar_list = [f"{shard:05d}.tar" for shard in range(shard_start, shard_end)]
    for tar in tar_list:
        dist.barrier()
        os.system(f"tar -xkf {os.path.join(data_path, tar)}")
    # Hard negative: the same window, written as a start and a length.
    first = rank * shared_size
    for shard in range(first, first + shared_size):
        dist.barrier()
        os.system(f"tar -xkf {os.path.join(data_path, str(shard))}")
    # From this rank's start to the end: rank 0 runs the most.
    for shard in range(rank * shared_size, n_shards):
        dist.barrier()
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: {{.*}}barrier{{.*}} trip count {{.*}} [ddp-divergent-collective]


def uniform_window(step, t):
    # Hard negative: a window every rank computes alike holds the same
    # values on every rank, not only as many.
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    for i in range(step, step + 10):
        if i % 5 == 0:
            dist.all_reduce(t)

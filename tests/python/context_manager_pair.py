"""A context manager's `__enter__` and `__exit__` run as one unit around the
`with` body: a barrier one rank skips on entering may be the one it issues on
leaving (alpaca_farm's staggered object creation: even local ranks wait in
`__enter__`, odd ones in `__exit__`, every rank twice).
"""
import datetime

import torch.distributed as dist


class StaggeredCreation:
    # Hard negative: every rank issues two barriers over the pair.
    def __init__(self, local_rank, world_size):
        self.local_rank = local_rank
        self.world_size = world_size

    def __enter__(self, *args, **kwargs):
        del args, kwargs
        if self.world_size > 1 and self.local_rank % 2 == 0:
            dist.barrier()
        return self

    def __exit__(self, *args, **kwargs):
        del args, kwargs
        if self.world_size > 1:
            if self.local_rank % 2 == 1:
                dist.barrier()
            dist.barrier()


class MainFirstUnbalanced:
    # Rank 0 waits on entering, and nobody waits on leaving: two barriers on
    # rank 0, one elsewhere.
    def __init__(self, rank):
        self.rank = rank

    def __enter__(self):
        if self.rank == 0:
            dist.barrier()
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: barrier runs only on ranks where 'self.rank == 0' holds{{.*}} [ddp-divergent-collective]
        return self

    def __exit__(self, *exc):
        dist.barrier()


def build(model_fn):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    with StaggeredCreation(dist.get_rank(), dist.get_world_size()):
        return model_fn()

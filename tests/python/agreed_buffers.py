"""What a collective agrees and where it runs, as Megatron-style code writes
it: `all_reduce(reduced_loss.data, group=...)` agrees the tensor whose storage
it reduces, and a group handed by position (`broadcast(t, src, group)`) is a
group of some ranks, whose sending and receiving halves are not compared with
the world's.
"""
import datetime

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def train_step(model, x, dp_group):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    model = DDP(model)
    for i in range(10):
        loss = model(x).sum()
        reduced_loss = loss.detach().clone().view(1)
        dist.all_reduce(reduced_loss.data, group=dp_group)
        reduced_loss.data = reduced_loss.data / 2
        # Hard negative: the reduced loss is the group's.
        if not torch.isnan(reduced_loss).any():
            loss.backward()


def send_context(tokens, tp_rank, first_stage, src, pp_group):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    # Hard negative: both halves of one broadcast on the pipeline group.
    if tp_rank == 0:
        if first_stage:
            dist.broadcast(tokens, src, pp_group)
        else:
            dist.broadcast(tokens, src, pp_group)
    # The world's, by position: rank 0 alone reaches it.
    if dist.get_rank() == 0:
        dist.broadcast(tokens, 0, None)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'broadcast' runs only on ranks where 'dist.get_rank() == 0' holds{{.*}} [ddp-divergent-collective]

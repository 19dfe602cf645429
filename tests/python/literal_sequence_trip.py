"""A loop over a list or tuple written out element by element (AlgoPerf's
ogbg metrics: `all_values = [labels, logits, mask]`, then an all_gather per
entry) runs as many times on every rank, whatever this rank's values in it.
A list that grows with this rank's data does not.
"""
import datetime

import torch
import torch.distributed as dist


def gather_all(t):
    out = [torch.zeros_like(t) for _ in range(dist.get_world_size())]
    dist.all_gather(out, t)
    return torch.cat(out)


def compute(labels, logits, mask):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    # hard negatives: three entries on every rank
    all_values = [labels, logits, mask]
    for idx, array in enumerate(all_values):
        all_values[idx] = gather_all(torch.as_tensor(array))
    for t in (labels, logits):
        gather_all(t)
    return all_values


def compute_kept(labels, logits, mask):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    values = [labels, logits]
    if mask.sum() > 0:
        values.append(mask)
    for v in values:
        gather_all(v)  # CHECK-MESSAGES: :[[@LINE]]:9: error: call to 'gather_all', which runs collective 'all_gather', runs in a loop whose trip count depends on 'values'{{.*}} [ddp-divergent-collective]

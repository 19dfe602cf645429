"""A loop whose body tests a setting (`if zero3:`) that a path before it left
open: collie's from_pretrained loads the state dict `if not zero3 or rank ==
0:`, so rank 0's path never decided zero3 there.  In the parameter loop each
rank meets the others under the same setting: with ZeRO-3 every rank gathers,
without it none does.  A rank-0-only loop that gathers under the setting is
still rank 0's alone.
"""
import datetime

import deepspeed
import torch.distributed as dist


def load_state_dict(path):
    return {"w": path}


def from_pretrained(model, path, zero3):  # hard negative
    state_dict = {}
    if not zero3 or dist.get_rank() == 0:
        state_dict = load_state_dict(path)
    for name, param in model.named_parameters():
        if zero3:
            with deepspeed.zero.GatheredParameters(param, modifier_rank=0):
                param.data.copy_(state_dict.get(name, param.data))


def sync_settings(model, zero3):  # hard negative: the same with a barrier
    if zero3 and dist.get_rank() != 0:
        pass
    else:
        load_state_dict("x")
    for p in model.parameters():
        if zero3:
            dist.barrier()


def gather_on_rank0(model, zero3):
    if dist.get_rank() == 0:
        load_state_dict("x")
        for p in model.parameters():
            if zero3:
                dist.barrier()
                # CHECK-MESSAGES: :[[@LINE-1]]:17: error: barrier runs only on ranks where {{.*}} [ddp-divergent-collective]


def main():
    dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))

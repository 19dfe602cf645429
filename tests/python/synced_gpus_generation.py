"""Hugging Face's generation loop with `synced_gpus` (DeepSpeed ZeRO-3): the
peer-finished flag is all-reduced only `if synced_gpus`, and a rank breaks on
its own stop only `if not synced_gpus`.  `synced_gpus` is a parameter the
function never assigns, so every iteration decides it alike: a rank that
breaks leaves no all-reduce behind.  A break on a rank's own stop where the
flag is all-reduced is the hang the protocol exists to avoid.
"""
import datetime

import torch
import torch.distributed as dist


class GenerationMixin:
    def greedy_search(self, input_ids, synced_gpus=False):  # hard negative
        this_peer_finished = False
        while True:
            if synced_gpus:
                flag = torch.tensor(0.0 if this_peer_finished else 1.0)
                dist.all_reduce(flag, op=dist.ReduceOp.SUM)
                if flag.item() == 0.0:
                    break
            logits = self(input_ids)
            if synced_gpus and this_peer_finished:
                continue
            next_tokens = logits[:, -1, :].argmax(-1)
            input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
            if next_tokens.max().item() == 0:
                if not synced_gpus:
                    break
                else:
                    this_peer_finished = True
        return input_ids

    def sample_synced_wrong(self, input_ids, synced_gpus=False):
        while True:
            if synced_gpus:
                flag = torch.tensor(1.0)
                dist.all_reduce(flag, op=dist.ReduceOp.SUM)
                # CHECK-MESSAGES: :[[@LINE-1]]:17: error: collective 'all_reduce' is skipped by ranks where {{.*}} [ddp-divergent-collective]
            logits = self(input_ids)
            next_tokens = logits[:, -1, :].argmax(-1)
            input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
            if next_tokens.max().item() == 0:
                if synced_gpus:
                    break  # leaves the others in the next all-reduce
        return input_ids


def main(model, prompt):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    model.greedy_search(prompt, synced_gpus=True)
    model.sample_synced_wrong(prompt, synced_gpus=True)

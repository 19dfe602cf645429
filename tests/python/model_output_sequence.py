"""What a model's forward returns has the model's shape: NVAE's autoencoder
returns one KL term per latent group, and the training loop all-reduces
each.  Every rank runs that loop as many times, whatever its values.  A
list this rank filters from the output does not.
"""
import datetime

import torch
import torch.distributed as dist


def average_tensor(t):
    dist.all_reduce(t.data, op=dist.ReduceOp.SUM)


def train(train_queue, model, opt):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    for step, x in enumerate(train_queue):
        x = preprocess(x)
        logits, log_q, kl_diag = model(x)
        logits.mean().backward()
        opt.step()
        # hard negative: one entry per latent group
        for i, kl_diag_i in enumerate(kl_diag):
            average_tensor(kl_diag_i)
        active = [k for k in kl_diag if k.sum() > 0.1]
        for k in active:
            average_tensor(k)  # CHECK-MESSAGES: :[[@LINE]]:13: error: call to 'average_tensor', which runs collective 'all_reduce', runs in a loop whose trip count depends on 'active'{{.*}} [ddp-divergent-collective]


def preprocess(x):
    return x * 2 - 1

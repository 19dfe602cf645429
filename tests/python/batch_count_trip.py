"""An epoch count computed from the loader's batch count (open-muse's
`math.ceil(train_dataloader.num_batches / accumulation)`): the same on every
rank, also where a debugging flag swapped the loader for a list of this
rank's first batch.  A count of this rank's own samples is not.
"""
import datetime
import math

import torch
import torch.distributed as dist


def train(model, train_dataloader, config):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    if config.overfit_one_batch:
        train_dataloader = [next(iter(train_dataloader))]
    # Hard negative: the batch count is the loader's, alike on every rank.
    steps_per_epoch = math.ceil(train_dataloader.num_batches / config.accumulation)
    epochs = math.ceil(config.max_train_steps / steps_per_epoch)
    for epoch in range(epochs):
        for batch in train_dataloader:
            loss = model(batch).sum()
            dist.all_reduce(loss)
    # A count of this rank's own samples differs.
    kept = [b for b in train_dataloader if b.sum() > 0]
    for i in range(len(kept)):
        dist.all_reduce(model)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'all_reduce' runs in a loop whose trip count depends on 'range(len(kept))'{{.*}} [ddp-divergent-collective]

"""An attribute handed to init_process_group as `rank=` is the rank.

ffcv-imagenet's trainer keeps the process index in `self.gpu`, hands it to
`init_process_group(rank=self.gpu, ...)`, and saves the final weights under
`if self.gpu == 0:`: rank 0's save, not every rank's.  A collective under the
same test runs on rank 0 alone.
"""
import datetime
import os

import torch
import torch.distributed as dist


class ImageNetTrainer:
    def __init__(self, gpu):
        self.gpu = gpu
        dist.init_process_group("nccl", rank=self.gpu, world_size=int(os.environ["WORLD_SIZE"]),
                                timeout=datetime.timedelta(seconds=1800))
        self.model = torch.nn.Linear(4, 4).cuda(self.gpu)

    def train(self, epochs):
        for epoch in range(epochs):
            loss = self.model(torch.randn(2, 4)).sum()
            loss.backward()
        if self.gpu == 0:
            torch.save(self.model.state_dict(), "final_weights.pt")

    def log_stats(self, stats):
        if self.gpu == 0:
            dist.all_reduce(stats)  # CHECK-MESSAGES: :[[@LINE]]:13: error: collective 'all_reduce' runs only on ranks where 'self.gpu == 0' holds{{.*}} [ddp-divergent-collective]

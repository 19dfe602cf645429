"""A loader over samples each iteration made is a new loader, not a rebuilt one.

MOSS-RLHF's PPO trainer: every pass calls `self.make_experiences()`, which
appends fresh rollouts to `self.replay_buffer`, then builds
`DataLoader(ExperienceDataset(self.replay_buffer, ...))` over them, and
clears the buffer at the end.  There is no loader to build once before the
loop.  A buffer the loop only reads, or a dataset made the same way every
pass, is the same data again: that loader is rebuilt for nothing.
"""
import datetime

import torch.distributed as dist
from torch.utils.data import DataLoader


class PPOTrainer:
    def __init__(self, opt, policy):
        dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
        self.opt = opt
        self.policy = policy
        self.replay_buffer = []
        self.prompts = []

    def make_experiences(self):
        while len(self.replay_buffer) < self.opt.num_rollouts:
            self.replay_buffer.append(self.policy.rollout())

    def count_prompts(self):
        return len(self.prompts)

    def train(self):
        while True:
            self.make_experiences()
            train_loader = DataLoader(self.replay_buffer, batch_size=None, num_workers=self.opt.num_workers,
                                      persistent_workers=True, pin_memory=True)
            for batch in train_loader:
                self.policy.step(batch)
            self.replay_buffer.clear()

    def train_inline(self, env):
        buffer = []
        for it in range(self.opt.iterations):
            buffer.extend(env.collect(self.policy))
            loader = DataLoader(buffer, batch_size=8, num_workers=2, persistent_workers=True, pin_memory=True)
            for batch in loader:
                self.policy.step(batch)
            buffer.clear()

    def train_prompts(self):
        for epoch in range(self.opt.epochs):
            self.count_prompts()
            loader = DataLoader(self.prompts, batch_size=8, num_workers=2, persistent_workers=True, pin_memory=True)  # CHECK-MESSAGES: :[[@LINE]]:22: warning: data loader built by 'DataLoader' inside a loop{{.*}} [ddp-dataloader-recreated]
            for batch in loader:
                self.policy.step(batch)

    def evaluate(self, step):
        loader = DataLoader(self.prompts, batch_size=8, num_workers=2, persistent_workers=True, pin_memory=True)
        for batch in loader:
            self.policy.score(batch, step)

    def train_with_counter(self):
        step = 0
        for epoch in range(self.opt.epochs):
            step += 1
            self.evaluate(step)  # CHECK-MESSAGES: :[[@LINE]]:13: warning: 'self.evaluate' builds a data loader (via 'DataLoader') and is called inside a loop{{.*}} [ddp-dataloader-recreated]


def per_fold(folds, model):
    for fold in folds:
        loader = DataLoader(fold.dataset, batch_size=8, num_workers=2, persistent_workers=True, pin_memory=True)
        for batch in loader:
            model(batch)

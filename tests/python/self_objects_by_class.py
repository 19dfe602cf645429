"""`self.model` is an object of the class whose methods set it.

denoising-diffusion-pytorch's Trainer prepares `self.model` with Accelerate
(a DDP model: its forward may broadcast buffers), while the GaussianDiffusion
it wraps calls its own `self.model`, the plain Unet, under a random
self-conditioning coin.  Only the Trainer's is a collective.
"""
import random

import torch
from accelerate import Accelerator


class GaussianDiffusion(torch.nn.Module):
    def __init__(self, unet):
        super().__init__()
        self.model = unet

    def forward(self, x, t):
        # Hard negative: the Unet's forward, not the prepared model's.
        if random.random() < 0.5:
            with torch.no_grad():
                x = self.model(x, t)
        return self.model(x, t)


class Trainer:
    def __init__(self, diffusion, loader):
        self.accelerator = Accelerator()
        self.model = diffusion
        self.model, self.loader = self.accelerator.prepare(self.model, loader)

    def train(self, steps):
        for step in range(steps):
            x, t = next(self.loader)
            # A coin each rank tosses on its own: the prepared model's forward
            # runs on some ranks only.
            if random.random() < 0.5:
                self.model(x, t)  # CHECK-MESSAGES: :[[@LINE]]:17: error: {{.*}}'self.model' prepared by accelerate{{.*}} [ddp-divergent-collective]
            loss = self.model(x, t).sum()
            self.accelerator.backward(loss)


class EmaTrainer(Trainer):
    def sample(self, x, t):
        # A subclass's method sees the base class's prepared model.
        if random.random() < 0.5:
            return self.model(x, t)  # CHECK-MESSAGES: :[[@LINE]]:20: error: {{.*}}'self.model' prepared by accelerate{{.*}} [ddp-divergent-collective]
        return None

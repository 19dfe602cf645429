"""A Lightning CheckpointIO plugin's save_checkpoint runs on global rank zero.

donut's `CustomCheckpointIO(CheckpointIO)` writes with a bare `torch.save`:
Lightning's strategy calls the plugin under `if self.is_global_zero`, and
Trainer.save_checkpoint waits in a barrier after it, so the plugin needs no
rank test of its own (before, its write was every rank's).  A class of the
project that is no plugin, whose save_checkpoint the training loop calls on
every rank, still writes one path from every rank.
"""
import datetime

import pytorch_lightning as pl
import torch
import torch.distributed as dist
from pytorch_lightning.plugins import CheckpointIO


class CustomCheckpointIO(CheckpointIO):
    def save_checkpoint(self, checkpoint, path, storage_options=None):
        del checkpoint["state_dict"]
        torch.save(checkpoint, path)

    def load_checkpoint(self, path, storage_options=None):
        return torch.load(path)

    def remove_checkpoint(self, path) -> None:
        return super().remove_checkpoint(path)


class Saver:
    def save_checkpoint(self, checkpoint, path):
        torch.save(checkpoint, path)  # CHECK-MESSAGES: :[[@LINE]]:9: error: {{.*}}every rank runs 'torch.save' to the same path{{.*}} [ddp-unguarded-save]


def train(model, data):
    trainer = pl.Trainer(devices=2, strategy="ddp", accelerator="gpu", plugins=CustomCheckpointIO())
    trainer.fit(model, data)


def train_plain(model, loader, opt):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    saver = Saver()
    for batch in loader:
        loss = model(batch).sum()
        loss.backward()
        opt.step()
        saver.save_checkpoint(model.state_dict(), "last.pt")

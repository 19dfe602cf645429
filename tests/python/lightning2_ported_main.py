"""Latent diffusion's main.py ported to Lightning 2 (LightningDiT's VA-VAE):
names of the 1.x API survive only in a comment, in a function nothing calls,
in a `try`/`except AttributeError` shim and as a hook 2.x never calls.  The
module is 2.x code: Trainer.save_checkpoint waits in a barrier, so the
script's own trainer saving on rank 0 only (the SIGUSR1 `melk` handler)
leaves rank 0 alone in it, and the removed `on_keyboard_interrupt` hook is
dead code.
"""
import argparse
import os
import signal
import time

import pytorch_lightning as pl
import torch
from pytorch_lightning.callbacks import Callback
from pytorch_lightning.trainer import Trainer


def nondefault_trainer_args(opt):
    parser = argparse.ArgumentParser()
    parser = Trainer.add_argparse_args(parser)
    args = parser.parse_args([])
    return sorted(k for k in vars(args) if getattr(opt, k) != getattr(args, k))


class SetupCallback(Callback):
    def __init__(self, ckptdir):
        super().__init__()
        self.ckptdir = ckptdir

    def on_keyboard_interrupt(self, trainer, pl_module):
        # Hard negative: Lightning 2 never calls this hook.
        if trainer.global_rank == 0:
            trainer.save_checkpoint(os.path.join(self.ckptdir, "last.ckpt"))


class CUDACallback(Callback):
    def on_train_epoch_start(self, trainer, pl_module):
        self.start_time = time.time()

    def on_train_epoch_end(self, trainer, pl_module):
        epoch_time = time.time() - self.start_time
        try:
            epoch_time = trainer.training_type_plugin.reduce(epoch_time)
        except AttributeError:
            pass
        print(epoch_time)


def main(opt, model, data, ckptdir):
    # parser = Trainer.add_argparse_args(parser)
    trainer = Trainer(strategy="ddp", devices=2, callbacks=[SetupCallback(ckptdir), CUDACallback()])

    def melk(*args, **kwargs):
        if trainer.global_rank == 0:
            trainer.save_checkpoint(os.path.join(ckptdir, "last.ckpt"))
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: barrier 'trainer.save_checkpoint() (Lightning: every rank)' runs only on ranks where 'trainer.global_rank == 0' holds{{.*}} [ddp-divergent-collective]

    signal.signal(signal.SIGUSR1, melk)
    try:
        trainer.fit(model, data)
    except Exception:
        melk()
        raise
    torch.cuda.empty_cache()

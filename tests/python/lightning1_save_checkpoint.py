"""Lightning 1.x code (CompVis' latent diffusion, pinned to pytorch-lightning
1.4): Trainer.save_checkpoint writes on global rank zero and waits for nobody,
so the rank-0 call in `on_keyboard_interrupt` is the intended idiom, not a
barrier only rank 0 reaches.  The module says it is 1.x through names 2.0
removed (api.yaml lightning_1_markers).  The same callback in 2.x code is a
hang (tests/python/lightning_module.py).
"""
import os
import signal

import pytorch_lightning as pl
from pytorch_lightning.callbacks import Callback
from pytorch_lightning.utilities.distributed import rank_zero_only


class SetupCallback(Callback):
    def __init__(self, ckptdir):
        self.ckptdir = ckptdir

    def on_keyboard_interrupt(self, trainer, pl_module):
        if trainer.global_rank == 0:
            # hard negative: 1.x writes on rank 0 and has no barrier in it
            trainer.save_checkpoint(os.path.join(self.ckptdir, "last.ckpt"))

    def on_validation_end(self, trainer, pl_module):
        # every rank calls it and rank 0 alone writes (no shared-path race),
        # then goes on into training with nothing that waits for the write
        trainer.save_checkpoint(os.path.join(self.ckptdir, "val.ckpt"))
        # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: 'trainer.save_checkpoint' writes files only on rank 0 (its own main-process guard), with no barrier every rank reaches after it{{.*}} [ddp-rank0-io-barrier]

    @rank_zero_only
    def on_train_start(self, trainer, pl_module):
        print(trainer.training_type_plugin)


def main(opt, model, data):
    trainer = pl.Trainer.from_argparse_args(opt, gpus=8, accelerator="ddp",
                                            callbacks=[SetupCallback("ckpt")])

    def melk(*args, **kwargs):
        # "allow checkpointing via USR1": rank 0 writes mid-training while the
        # others go back to their step (tests/python/signal_handler_rank0_save.py)
        if trainer.global_rank == 0:
            # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
            trainer.save_checkpoint(os.path.join("ckpt", "last.ckpt"))

    signal.signal(signal.SIGUSR1, melk)
    try:
        trainer.fit(model, data)
    except Exception:
        melk()
        raise

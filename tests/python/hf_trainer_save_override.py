"""transformers' Trainer.save_model calls `_save` only where
`args.should_save` holds (process zero), on every path: a subclass's `_save`
override (tevatron's retriever trainer) writes from that process alone
(rules/api.yaml main_process_override_bases).  A `_save` of the project's own
trainer, which every rank calls, is still every rank's write.
"""
import os

import torch
import torch.distributed as dist
from transformers import Trainer
from transformers.trainer import TRAINING_ARGS_NAME


class EncoderTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.is_ddp = dist.is_initialized()

    # hard negative: the framework calls it on the main process only
    def _save(self, output_dir=None, state_dict=None):
        output_dir = output_dir if output_dir is not None else self.args.output_dir
        os.makedirs(output_dir, exist_ok=True)
        self.model.encoder.save_pretrained(output_dir, state_dict=state_dict)
        torch.save(self.args, os.path.join(output_dir, TRAINING_ARGS_NAME))


class OwnTrainer:
    def __init__(self, model, loader):
        self.model, self.loader = model, loader

    def _save(self, output_dir):
        torch.save(self.model.state_dict(), os.path.join(output_dir, "model.pt"))
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: every rank runs 'torch.save' to the same path{{.*}} [ddp-unguarded-save]

    def train(self, output_dir):
        for batch in self.loader:
            self.model(batch).sum().backward()
            dist.barrier()
        self._save(output_dir)

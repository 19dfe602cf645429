"""The barrier after a rank-0 write, in the caller, under the same test of the
object's own state.

The Hugging Face Trainer as ChatGLM-6B vendors it: `save_model` writes the
weights under `if self.deepspeed: ... if self.args.should_save:`, and its
caller `_save_checkpoint` then runs `if self.deepspeed:
self.deepspeed.save_checkpoint(...)`, which every rank calls and which waits
in a barrier.  Where rank 0 wrote, `self.deepspeed` held, so every rank meets
the engine's barrier next (before, the caller's `if` was read as one the
write's path might skip).  A caller that tests another attribute does not
order it.
"""
import os

import deepspeed


class Trainer:
    def __init__(self, model, args, ds_config):
        self.args = args
        self.deepspeed, self.optimizer, _, _ = deepspeed.initialize(model=model, config=ds_config)
        self.model = model

    def _save(self, output_dir):
        os.makedirs(output_dir, exist_ok=True)
        self.model.save_pretrained(output_dir)

    def save_model(self, output_dir):
        if self.deepspeed:
            if self.args.should_save:
                self._save(output_dir)

    def _save_checkpoint(self, step):
        output_dir = os.path.join(self.args.output_dir, f"checkpoint-{step}")
        self.save_model(output_dir)
        if self.deepspeed:
            self.deepspeed.save_checkpoint(output_dir)

    def train(self, loader):
        for step, batch in enumerate(loader):
            loss = self.deepspeed(**batch).loss
            self.deepspeed.backward(loss)
            self.deepspeed.step()
            if step % self.args.save_steps == 0:
                self._save_checkpoint(step)


class OtherTest:
    def __init__(self, model, args, ds_config):
        self.args = args
        self.deepspeed, self.optimizer, _, _ = deepspeed.initialize(model=model, config=ds_config)
        self.model = model

    def save_model(self, output_dir):
        if self.deepspeed:
            if self.args.should_save:  # CHECK-MESSAGES: :[[@LINE]]:13: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it{{.*}} [ddp-rank0-io-barrier]
                self.model.save_pretrained(output_dir)

    def _save_checkpoint(self, step):
        output_dir = os.path.join(self.args.output_dir, f"checkpoint-{step}")
        self.save_model(output_dir)
        if self.args.engine_state:
            self.deepspeed.save_checkpoint(output_dir)

    def train(self, loader):
        for step, batch in enumerate(loader):
            loss = self.deepspeed(**batch).loss
            self.deepspeed.backward(loss)
            self.deepspeed.step()
            if step % self.args.save_steps == 0:
                self._save_checkpoint(step)

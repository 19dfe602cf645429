"""Hugging Face's `save_pretrained` (rules/api.yaml, checkpoint_write_methods)
in a script that torchrun starts once per GPU: the script reads the
launcher's `WORLD_SIZE` and `LOCAL_RANK` (alpaca-lora's finetune.py), and the
Trainer makes the process group.  `model.save_pretrained(output_dir)` writes
the weights on every process that calls it; `is_main_process=` is the call's
own guard; a tokenizer's files are small and not counted.
"""
import os

import transformers
from peft import get_peft_model


def train(base_model, data, lora_config, output_dir="./lora-alpaca"):
    device_map = "auto"
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    ddp = world_size != 1
    if ddp:
        device_map = {"": int(os.environ.get("LOCAL_RANK") or 0)}
    model = transformers.AutoModelForCausalLM.from_pretrained(base_model, device_map=device_map)
    tokenizer = transformers.AutoTokenizer.from_pretrained(base_model)
    model = get_peft_model(model, lora_config)
    trainer = transformers.Trainer(model=model, train_dataset=data)
    trainer.train()
    # CHECK-MESSAGES: :[[@LINE+1]]:5: error: every rank runs 'model.save_pretrained' to the same path, {{.*}} [ddp-unguarded-save]
    model.save_pretrained(output_dir)
    tokenizer.save_pretrained(output_dir)


def save_with_accelerate(accelerator, model, output_dir):
    # A hard negative: the main process alone writes.
    accelerator.wait_for_everyone()
    unwrapped = accelerator.unwrap_model(model)
    unwrapped.save_pretrained(output_dir, is_main_process=accelerator.is_main_process,
                              save_function=accelerator.save)


def save_on_rank(model, output_dir, rank):
    # A hard negative: the `rank` parameter of a launched script is the rank.
    if rank == 0:
        model.save_pretrained(output_dir)


class Trainer:
    """trlx's trainers: the project's own `save_pretrained`, which writes on
    the main process between barriers.  A call through `self` runs that
    definition, not Hugging Face's every-rank writer of the same name."""

    def save_pretrained(self, directory=None):
        self.accelerator.wait_for_everyone()
        if self.accelerator.is_main_process:
            self.accelerator.unwrap_model(self.model).save_pretrained(directory)
        self.accelerator.wait_for_everyone()

    def learn(self, loader, directory):
        for batch in loader:
            loss = self.model(batch).sum()
            self.accelerator.backward(loss)
            # A hard negative: the method above is guarded.
            self.save_pretrained(directory)

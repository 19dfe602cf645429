"""The QLoRA idiom: `device_map = "auto"`, then `{"": local_rank}` when the
script runs under torchrun.  Each rank holds its own copy of the model and
the Trainer runs DDP: the save after training is every rank's.
"""
import os

from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

from peft import LoraConfig, get_peft_model


def train(base_model, output_dir):
    device_map = "auto"
    if int(os.environ.get("WORLD_SIZE", 1)) > 1:
        device_map = {"": int(os.environ.get("LOCAL_RANK") or 0)}
    model = AutoModelForCausalLM.from_pretrained(base_model, device_map=device_map)
    model = get_peft_model(model, LoraConfig(r=8))
    trainer = Trainer(model=model, args=TrainingArguments(output_dir=output_dir))
    trainer.train()
    model.save_pretrained(output_dir)
    # CHECK-MESSAGES: :[[@LINE-1]]:5: error: every rank runs 'model.save_pretrained' to the same path{{.*}} [ddp-unguarded-save]


if __name__ == "__main__":
    train("facebook/opt-125m", "out")

"""A script that loads its model with Accelerate's automatic placement
(`device_map="auto"`, held in a name or written in place) spreads one model
over the GPUs of one process: the Hugging Face Trainer refuses such a model
under a distributed launch, so the script is not every rank's (peft's
examples).  Hard negative: nothing here is reported.
"""
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

from peft import LoraConfig, get_peft_model

DEVICE_MAP = "auto"


def train(base_model, output_dir):
    model = AutoModelForCausalLM.from_pretrained(base_model, device_map=DEVICE_MAP)
    model = get_peft_model(model, LoraConfig(r=8))
    trainer = Trainer(model=model, args=TrainingArguments(output_dir=output_dir))
    trainer.train()
    model.save_pretrained(output_dir)


if __name__ == "__main__":
    train("facebook/opt-125m", "out")

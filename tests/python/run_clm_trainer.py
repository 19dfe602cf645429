"""A transformers Trainer script (run_clm.py shape) launched with torchrun.  The
Trainer does the distributed work; the script's own code must not write shared
files from every rank.  Mostly hard negatives (main_process_first,
is_world_process_zero, Trainer.save_model), one planted unguarded save.

    torchrun --nproc_per_node 8 run_clm_trainer.py --model_name_or_path gpt2 --output_dir out
"""
import json
import logging
import os
from dataclasses import dataclass, field
from itertools import chain

import torch
import torch.distributed as dist
from datasets import load_dataset
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    HfArgumentParser,
    Trainer,
    TrainerCallback,
    TrainingArguments,
    default_data_collator,
)

logger = logging.getLogger(__name__)


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="gpt2")
    lora_rank: int = field(default=0, metadata={"help": "LoRA rank r; 0 disables LoRA"})


@dataclass
class DataArguments:
    dataset_name: str = field(default="wikitext")
    dataset_config_name: str = field(default="wikitext-2-raw-v1")
    block_size: int = field(default=1024)


class SaveExtrasCallback(TrainerCallback):
    def on_save(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            with open(os.path.join(args.output_dir, "extras.json"), "w") as f:
                json.dump({"step": state.global_step}, f)


def main():
    parser = HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
    world = dist.get_world_size() if dist.is_initialized() else 1
    logger.warning(f"process rank {training_args.local_rank}, world size {world}")

    raw = load_dataset(data_args.dataset_name, data_args.dataset_config_name)
    tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path)
    model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)

    def tokenize_function(examples):
        return tokenizer(examples["text"])

    def group_texts(examples):
        concatenated = {k: list(chain(*examples[k])) for k in examples.keys()}
        total_length = len(concatenated[list(examples.keys())[0]])
        total_length = (total_length // data_args.block_size) * data_args.block_size
        result = {
            k: [t[i: i + data_args.block_size] for i in range(0, total_length, data_args.block_size)]
            for k, t in concatenated.items()
        }
        result["labels"] = result["input_ids"].copy()
        return result

    with training_args.main_process_first(desc="dataset map tokenization"):
        tokenized = raw.map(tokenize_function, batched=True, remove_columns=["text"])
    with training_args.main_process_first(desc="grouping texts together"):
        lm_datasets = tokenized.map(group_texts, batched=True)

    trainer = Trainer(model=model, args=training_args, train_dataset=lm_datasets["train"],
                      eval_dataset=lm_datasets["validation"], tokenizer=tokenizer,
                      data_collator=default_data_collator, callbacks=[SaveExtrasCallback()])
    train_result = trainer.train()
    trainer.save_model()  # the Trainer saves on the main process only
    trainer.log_metrics("train", train_result.metrics)
    trainer.save_metrics("train", train_result.metrics)
    trainer.save_state()

    # Every rank writes the raw weights to one file.
    # CHECK-MESSAGES: :[[@LINE+1]]:5: error: same path [ddp-unguarded-save]
    torch.save(trainer.model.state_dict(), os.path.join(training_args.output_dir, "raw_weights.pt"))

    metrics = trainer.evaluate()
    trainer.log_metrics("eval", metrics)
    if trainer.is_world_process_zero():  # the last step: nothing waits for it
        with open(os.path.join(training_args.output_dir, "lora.json"), "w") as f:
            json.dump({"lora_rank": model_args.lora_rank, **metrics}, f)


if __name__ == "__main__":
    main()

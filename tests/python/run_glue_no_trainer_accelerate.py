"""Fine-tune a sequence classifier with HF Accelerate, no Trainer (the shape of the
transformers run_*_no_trainer.py examples), with planted bugs.

    accelerate launch --multi_gpu --num_processes 8 run_glue_no_trainer_accelerate.py ...
"""
import argparse
import json
import logging
import math
import os

import evaluate
import torch
from accelerate import Accelerator
from accelerate.logging import get_logger
from accelerate.utils import set_seed
from datasets import load_dataset
from torch.utils.data import DataLoader
from tqdm.auto import tqdm
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    DataCollatorWithPadding,
    get_scheduler,
)

logger = get_logger(__name__)


def parse_args():
    parser = argparse.ArgumentParser(description="Finetune on a GLUE task")
    parser.add_argument("--task_name", type=str, default="mrpc")
    parser.add_argument("--model_name_or_path", type=str, required=True)
    parser.add_argument("--per_device_train_batch_size", type=int, default=8)
    parser.add_argument("--per_device_eval_batch_size", type=int, default=8)
    parser.add_argument("--learning_rate", type=float, default=5e-5)
    parser.add_argument("--num_train_epochs", type=int, default=3)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--checkpointing_steps", type=int, default=None)
    parser.add_argument("--output_dir", type=str, default=None)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--preprocessing_num_workers", type=int, default=4)
    parser.add_argument("--with_tracking", action="store_true")
    return parser.parse_args()


def main():
    args = parse_args()
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps,
                              log_with="tensorboard" if args.with_tracking else None,
                              project_dir=args.output_dir)
    logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
                        level=logging.INFO)
    logger.info(accelerator.state, main_process_only=False)
    if args.seed is not None:
        set_seed(args.seed)

    if accelerator.is_main_process and args.output_dir is not None:
        os.makedirs(args.output_dir, exist_ok=True)
    accelerator.wait_for_everyone()

    raw_datasets = load_dataset("glue", args.task_name)
    num_labels = len(raw_datasets["train"].features["label"].names)
    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)
    model = AutoModelForSequenceClassification.from_pretrained(args.model_name_or_path,
                                                               num_labels=num_labels)

    def preprocess_function(examples):
        result = tokenizer(examples["sentence1"], examples["sentence2"], truncation=True,
                           max_length=128)
        result["labels"] = examples["label"]
        return result

    with accelerator.main_process_first():
        processed = raw_datasets.map(preprocess_function, batched=True,
                                     remove_columns=raw_datasets["train"].column_names)

    collator = DataCollatorWithPadding(tokenizer)
    train_dataloader = DataLoader(processed["train"], shuffle=True, collate_fn=collator,
                                  batch_size=args.per_device_train_batch_size)
    # CHECK-MESSAGES: :[[@LINE+1]]:23: warning: persistent_workers [ddp-dataloader-options]
    eval_dataloader = DataLoader(processed["validation"], collate_fn=collator,
                                 batch_size=args.per_device_eval_batch_size,
                                 num_workers=args.preprocessing_num_workers)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    num_update_steps_per_epoch = math.ceil(len(train_dataloader) / args.gradient_accumulation_steps)
    max_train_steps = args.num_train_epochs * num_update_steps_per_epoch
    lr_scheduler = get_scheduler("linear", optimizer=optimizer, num_warmup_steps=0,
                                 num_training_steps=max_train_steps)
    model, optimizer, train_dataloader, eval_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, eval_dataloader, lr_scheduler)

    metric = evaluate.load("glue", args.task_name)
    progress_bar = tqdm(range(max_train_steps), disable=not accelerator.is_local_main_process)
    completed_steps = 0
    for epoch in range(args.num_train_epochs):
        model.train()
        total_loss = 0.0
        for step, batch in enumerate(train_dataloader):
            with accelerator.accumulate(model):
                outputs = model(**batch)
                loss = outputs.loss
                total_loss += loss.detach().float()
                accelerator.backward(loss)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients:
                progress_bar.update(1)
                completed_steps += 1
            if args.checkpointing_steps and completed_steps % args.checkpointing_steps == 0:
                accelerator.save_state(os.path.join(args.output_dir, f"step_{completed_steps}"))
            if torch.isnan(loss) and accelerator.is_main_process:
                accelerator.set_trigger()
            if accelerator.check_trigger():  # agreed across processes
                break
            if completed_steps >= max_train_steps:
                break

        model.eval()
        eval_losses = []
        for step, batch in enumerate(eval_dataloader):
            with torch.no_grad():
                outputs = model(**batch)
            predictions = outputs.logits.argmax(dim=-1)
            predictions, references = accelerator.gather_for_metrics((predictions, batch["labels"]))
            metric.add_batch(predictions=predictions, references=references)
            eval_losses.append(outputs.loss.detach().reshape(1))
        eval_metric = metric.compute()
        logger.info(f"epoch {epoch}: {eval_metric}")

        if accelerator.is_main_process:
            # Only the main process joins the gather: the others are already training.
            # CHECK-MESSAGES: :[[@LINE+1]]:26: error: gather [ddp-divergent-collective]
            all_losses = accelerator.gather(torch.cat(eval_losses))
            logger.info(f"mean eval loss over all processes {all_losses.mean().item():.4f}")

        # Mid-run record of the evaluation: for people, read by no process of the
        # run, so the next epoch's collectives do not race with a reader.
        if accelerator.is_main_process and args.output_dir is not None:
            with open(os.path.join(args.output_dir, f"eval_epoch{epoch}.json"), "w") as f:
                json.dump({"epoch": epoch, **eval_metric}, f)

        if args.with_tracking:
            accelerator.log({"accuracy": eval_metric["accuracy"],
                             "train_loss": total_loss.item() / len(train_dataloader)},
                            step=completed_steps)

    accelerator.end_training()
    if args.output_dir is not None:
        accelerator.wait_for_everyone()
        unwrapped_model = accelerator.unwrap_model(model)
        unwrapped_model.save_pretrained(args.output_dir, is_main_process=accelerator.is_main_process,
                                        save_function=accelerator.save)
        # Every process writes the optimizer state to one file.
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: same path [ddp-unguarded-save]
        torch.save(optimizer.state_dict(), os.path.join(args.output_dir, "optimizer.pt"))
        if accelerator.is_main_process:
            tokenizer.save_pretrained(args.output_dir)
            with open(os.path.join(args.output_dir, "all_results.json"), "w") as f:
                json.dump({"eval_accuracy": eval_metric["accuracy"]}, f)


if __name__ == "__main__":
    main()

"""An older transformers-style fine-tuning script for torch.distributed.launch
(--local_rank argument, -1 = not distributed) on PyTorch 1.13, with its bugs:
NCCL without async error handling or timeout, and checkpoints written once per
NODE (local rank 0) to one shared path.

    python -m torch.distributed.launch --nnodes 2 --nproc_per_node 8 legacy_launch_local_rank.py ...
"""
# CONFIG: launch:
# CONFIG:   torch_version: "1.13"
import argparse
import logging
import os

import torch
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, RandomSampler
from torch.utils.data.distributed import DistributedSampler
from tqdm import tqdm, trange
from transformers import AdamW, BertForSequenceClassification, BertTokenizer

logger = logging.getLogger(__name__)


def load_and_cache_examples(args, tokenizer):
    cached = os.path.join(args.data_dir, f"cached_train_{args.max_seq_length}")
    if os.path.exists(cached) and not args.overwrite_cache:
        return torch.load(cached)
    features = tokenizer(open(os.path.join(args.data_dir, "train.txt")).read().splitlines(),
                         padding="max_length", truncation=True, max_length=args.max_seq_length,
                         return_tensors="pt")
    dataset = torch.utils.data.TensorDataset(features["input_ids"], features["attention_mask"])
    if args.local_rank in [-1, 0]:
        # Local rank 0 of every node writes the shared cache file.
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: {{.*}} [ddp-unguarded-save]
        torch.save(dataset, cached)
    return dataset


def train(args, train_dataset, model):
    train_sampler = RandomSampler(train_dataset) if args.local_rank == -1 else DistributedSampler(train_dataset)
    train_dataloader = DataLoader(train_dataset, sampler=train_sampler, batch_size=args.train_batch_size)
    optimizer = AdamW(model.parameters(), lr=args.learning_rate)
    if args.local_rank != -1:
        model = DistributedDataParallel(model, device_ids=[args.local_rank],
                                        output_device=args.local_rank, find_unused_parameters=True)
    global_step = 0
    model.zero_grad()
    for _ in trange(int(args.num_train_epochs), desc="Epoch", disable=args.local_rank not in [-1, 0]):
        for step, batch in enumerate(tqdm(train_dataloader, disable=args.local_rank not in [-1, 0])):
            model.train()
            input_ids, attention_mask = (t.to(args.device) for t in batch)
            outputs = model(input_ids=input_ids, attention_mask=attention_mask, labels=input_ids[:, 0] % 2)
            loss = outputs[0] / args.gradient_accumulation_steps
            loss.backward()
            if (step + 1) % args.gradient_accumulation_steps == 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                optimizer.step()
                model.zero_grad()
                global_step += 1
                # Mid-training, the node's local rank 0 writes while every other rank goes on.
                # CHECK-MESSAGES: :[[@LINE+1]]:17: warning: block runs only on each node's local rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
                if args.local_rank in [-1, 0] and args.save_steps > 0 and global_step % args.save_steps == 0:
                    output_dir = os.path.join(args.output_dir, f"checkpoint-{global_step}")
                    os.makedirs(output_dir, exist_ok=True)
                    model_to_save = model.module if hasattr(model, "module") else model
                    # CHECK-MESSAGES: :[[@LINE+1]]:21: error: 'model_to_save.save_pretrained' is guarded by the node-local rank{{.*}} [ddp-unguarded-save]
                    model_to_save.save_pretrained(output_dir)
                    # One guard, one fix: the two saves below are notes of the
                    # finding above, not findings of their own.
                    torch.save(args, os.path.join(output_dir, "training_args.bin"))
                    torch.save(optimizer.state_dict(), os.path.join(output_dir, "optimizer.pt"))
                    logger.info("Saving model checkpoint to %s", output_dir)
            if 0 < args.max_steps < global_step:
                break
    return global_step


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_dir", required=True)
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--model_name_or_path", default="bert-base-uncased")
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--train_batch_size", type=int, default=32)
    parser.add_argument("--learning_rate", type=float, default=5e-5)
    parser.add_argument("--num_train_epochs", type=float, default=3.0)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--max_grad_norm", type=float, default=1.0)
    parser.add_argument("--max_steps", type=int, default=-1)
    parser.add_argument("--save_steps", type=int, default=500)
    parser.add_argument("--overwrite_cache", action="store_true")
    parser.add_argument("--do_train", action="store_true")
    parser.add_argument("--local_rank", type=int, default=-1, help="set by torch.distributed.launch")
    args = parser.parse_args()

    if args.local_rank == -1:
        args.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        torch.cuda.set_device(args.local_rank)
        args.device = torch.device("cuda", args.local_rank)
        # CHECK-MESSAGES: :[[@LINE+2]]:9: warning: timeout [ddp-init-timeout]
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: NCCL_ASYNC_ERROR_HANDLING [ddp-async-error-handling]
        torch.distributed.init_process_group(backend="nccl")
    logging.basicConfig(level=logging.INFO if args.local_rank in [-1, 0] else logging.WARN)

    # Only the first process of each node downloads the model and vocabulary.
    if args.local_rank not in [-1, 0]:
        torch.distributed.barrier()
    tokenizer = BertTokenizer.from_pretrained(args.model_name_or_path)
    model = BertForSequenceClassification.from_pretrained(args.model_name_or_path)
    if args.local_rank == 0:
        torch.distributed.barrier()
    model.to(args.device)

    if args.do_train:
        if args.local_rank not in [-1, 0]:
            torch.distributed.barrier()
        train_dataset = load_and_cache_examples(args, tokenizer)
        if args.local_rank == 0:
            torch.distributed.barrier()
        global_step = train(args, train_dataset, model)
        logger.info(" global_step = %s", global_step)

    if args.do_train and (args.local_rank == -1 or torch.distributed.get_rank() == 0):
        os.makedirs(args.output_dir, exist_ok=True)
        model.save_pretrained(args.output_dir)
        tokenizer.save_pretrained(args.output_dir)
        torch.save(args, os.path.join(args.output_dir, "training_args.bin"))


if __name__ == "__main__":
    main()

"""LoRA fine-tuning of a causal LM under DDP.  "rank" is everywhere here and is
mostly the LoRA rank r (a hyper-parameter, the same on every process): those
branches are hard negatives.  One planted bug: an early stop on this process's
perplexity.

    torchrun --nproc_per_node 4 lora_finetune_ddp.py --lora_rank 16
"""
# CONFIG: launch:
# CONFIG:   torch_version: "2.4"
import argparse
import math
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from peft import LoraConfig, get_peft_model, get_peft_model_state_dict
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from transformers import AutoModelForCausalLM


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="meta-llama/Llama-3.2-1B")
    p.add_argument("--lora_rank", type=int, default=16)
    p.add_argument("--lora_alpha", type=int, default=32)
    p.add_argument("--rank_schedule", default="8,16,32")
    p.add_argument("--max_ppl", type=float, default=50.0)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--output_dir", default="adapters")
    return p.parse_args()


def build_model(args, local_rank):
    base = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=torch.bfloat16)
    config = LoraConfig(r=args.lora_rank, lora_alpha=args.lora_alpha, lora_dropout=0.05,
                        target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM")
    model = get_peft_model(base, config).to(local_rank)
    return DDP(model, device_ids=[local_rank])


def grow_rank(args, step, t):
    rank = args.lora_rank
    if step > args.warmup and rank < 64:  # the LoRA rank: uniform
        rank *= 2
        dist.all_reduce(t)
    return rank


def main():
    args = parse_args()
    dist.init_process_group("nccl", timeout=timedelta(minutes=30))
    local_rank = int(os.environ["LOCAL_RANK"])
    global_rank = dist.get_rank()
    torch.cuda.set_device(local_rank)
    model = build_model(args, local_rank)

    for r in [int(x) for x in args.rank_schedule.split(",")]:  # a sweep of LoRA ranks
        dist.barrier()
        if global_rank == 0:
            print(f"planned LoRA rank {r}")

    hparams = {"rank": args.lora_rank, "alpha": args.lora_alpha}
    probe = torch.zeros(1, device=local_rank)
    if hparams["rank"] >= 16:
        dist.all_reduce(probe)

    train_set = torch.load(os.path.join("data", "tokenized_train.pt"))
    val_set = torch.load(os.path.join("data", "tokenized_val.pt"))
    train_sampler = DistributedSampler(train_set)
    train_loader = DataLoader(train_set, batch_size=8, sampler=train_sampler)
    val_loader = DataLoader(val_set, batch_size=8, sampler=DistributedSampler(val_set, shuffle=False))
    optimizer = torch.optim.AdamW((p for p in model.parameters() if p.requires_grad), lr=2e-4)

    step = 0
    for epoch in range(args.epochs):
        # A fresh shuffle seed from rank 0 every epoch.
        seed = torch.randint(0, 2**31 - 1, (1,), device=local_rank)
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: broadcast [ddp-divergent-collective]
        dist.broadcast(seed, src=0)
        train_sampler.seed = int(seed.item())
        train_sampler.set_epoch(epoch)
        model.train()
        for batch in train_loader:
            batch = {k: v.to(local_rank) for k, v in batch.items()}
            loss = model(**batch).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            grow_rank(args, step, probe)
            step += 1
        model.eval()
        loss_sum, count = 0.0, 0
        with torch.no_grad():
            for batch in val_loader:
                batch = {k: v.to(local_rank) for k, v in batch.items()}
                loss_sum += model.module(**batch).loss.item()
                count += 1
        local_ppl = math.exp(loss_sum / max(count, 1))
        if global_rank == 0:
            print(f"epoch {epoch}: rank-0 perplexity {local_ppl:.2f} (LoRA r={args.lora_rank})")
        if local_ppl > args.max_ppl:  # this process's perplexity: the others go on
            break

    dist.barrier()
    if global_rank == 0:
        os.makedirs(args.output_dir, exist_ok=True)
        torch.save(get_peft_model_state_dict(model.module),
                   os.path.join(args.output_dir, f"adapter_r{args.lora_rank}.bin"))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""An FSDP fine-tuning script (transformer, full-state-dict checkpoints), with
planted bugs next to the FSDP documentation's correct save pattern.

    torchrun --nnodes 4 --nproc_per_node 8 train_fsdp.py --save-model
"""
# CONFIG: launch:
# CONFIG:   torch_version: "2.4"
import argparse
import functools
import os
from datetime import timedelta
from pathlib import Path

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullStateDictConfig, MixedPrecision, StateDictType
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from datasets import load_dataset
from transformers import AutoModelForSeq2SeqLM
from transformers.models.t5.modeling_t5 import T5Block


def build_datasets():
    raw = load_dataset("wikihow", "all", data_dir="data/")
    return raw["train"].with_format("torch"), raw["validation"].with_format("torch")


def setup():
    dist.init_process_group("nccl", timeout=timedelta(minutes=30))


def cleanup():
    dist.destroy_process_group()


def train(model, rank, local_rank, train_loader, optimizer, epoch, sampler):
    model.train()
    fsdp_loss = torch.zeros(2).to(local_rank)
    sampler.set_epoch(epoch)
    for batch in train_loader:
        for key in batch.keys():
            batch[key] = batch[key].to(local_rank)
        optimizer.zero_grad()
        output = model(input_ids=batch["source_ids"], attention_mask=batch["source_mask"],
                       labels=batch["target_ids"])
        loss = output["loss"]
        loss.backward()
        optimizer.step()
        fsdp_loss[0] += loss.item()
        fsdp_loss[1] += len(batch["source_ids"])
    dist.all_reduce(fsdp_loss, op=dist.ReduceOp.SUM)
    train_loss = fsdp_loss[0] / fsdp_loss[1]
    if rank == 0:
        print(f"Train Epoch: {epoch}\tLoss: {train_loss:.4f}")
    return train_loss


def validation(model, rank, local_rank, val_loader):
    model.eval()
    fsdp_loss = torch.zeros(2).to(local_rank)
    with torch.no_grad():
        for batch in val_loader:
            for key in batch.keys():
                batch[key] = batch[key].to(local_rank)
            output = model(input_ids=batch["source_ids"], attention_mask=batch["source_mask"],
                           labels=batch["target_ids"])
            fsdp_loss[0] += output["loss"].item()
            fsdp_loss[1] += len(batch["source_ids"])
    val_loss = fsdp_loss[0] / fsdp_loss[1]  # this rank's loss, taken before the reduction
    dist.all_reduce(fsdp_loss, op=dist.ReduceOp.SUM)
    if rank == 0:
        print(f"Validation Loss: {fsdp_loss[0] / fsdp_loss[1]:.4f}")
    return val_loss


def save_model_checkpoint(model, rank, folder, epoch):
    save_policy = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, save_policy):
        cpu_state = model.state_dict()
    # The next epoch's collectives follow the call with no barrier in between.
    # CHECK-MESSAGES: :[[@LINE+1]]:5: warning: barrier [ddp-rank0-io-barrier]
    if rank == 0:
        save_dir = Path.cwd() / folder
        save_dir.mkdir(parents=True, exist_ok=True)
        torch.save(cpu_state, save_dir / f"t5-epoch{epoch}.pt")


def save_final(model, rank, folder):
    # The documented pattern: every rank gathers, rank 0 writes, barriers around it.
    save_policy = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, save_policy):
        cpu_state = model.state_dict()
    dist.barrier()
    if rank == 0:
        torch.save(cpu_state, Path(folder) / "t5-final.pt")
    dist.barrier()


def fsdp_main(args):
    local_rank = int(os.environ["LOCAL_RANK"])
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    setup()
    torch.cuda.set_device(local_rank)

    train_ds, val_ds = build_datasets()
    sampler1 = DistributedSampler(train_ds, rank=rank, num_replicas=world_size, shuffle=True)
    sampler2 = DistributedSampler(val_ds, rank=rank, num_replicas=world_size)
    train_loader = DataLoader(train_ds, batch_size=args.batch_size, sampler=sampler1,
                              num_workers=2, pin_memory=True, persistent_workers=True)
    # CHECK-MESSAGES: :[[@LINE+1]]:18: warning: persistent_workers [ddp-dataloader-options]
    val_loader = DataLoader(val_ds, batch_size=args.test_batch_size, sampler=sampler2,
                            num_workers=2, pin_memory=True)

    wrap_policy = functools.partial(transformer_auto_wrap_policy,
                                    transformer_layer_cls={T5Block})
    model = AutoModelForSeq2SeqLM.from_pretrained("t5-base")
    model = FSDP(model, auto_wrap_policy=wrap_policy,
                 mixed_precision=MixedPrecision(param_dtype=torch.bfloat16),
                 device_id=torch.cuda.current_device())
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)

    best_val_loss = float("inf")
    for epoch in range(1, args.epochs + 1):
        train(model, rank, local_rank, train_loader, optimizer, epoch, sampler1)
        curr_val_loss = validation(model, rank, local_rank, val_loader)
        if args.save_model and curr_val_loss < best_val_loss:
            # A rank-local loss decides whether the FSDP state_dict (an all-gather) runs.
            # CHECK-MESSAGES: :[[@LINE+1]]:13: error: save_model_checkpoint [ddp-divergent-collective]
            save_model_checkpoint(model, rank, args.folder, epoch)
            best_val_loss = curr_val_loss

    if args.save_model:
        save_final(model, rank, args.folder)
    dist.barrier()
    cleanup()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="T5 FSDP fine-tuning")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--test-batch-size", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=2e-4)
    parser.add_argument("--folder", default="checkpoints")
    parser.add_argument("--save-model", action="store_true")
    fsdp_main(parser.parse_args())

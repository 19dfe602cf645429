"""A torchtitan-style FSDP2 (fully_shard) pre-training loop with sharded
torch.distributed.checkpoint saves, a wall-clock checkpoint trigger and a final
full-state export.  One planted bug (a checkpoint decided by this rank's clock);
the rest are the correct patterns.

    torchrun --nnodes 8 --nproc_per_node 8 train_fsdp2_dcp.py
"""
# CONFIG: launch:
# CONFIG:   torch_version: "2.5"
import os
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed._composable.fsdp import fully_shard
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_optimizer_state_dict,
)
from torch.distributed.device_mesh import init_device_mesh


class CheckpointManager:
    def __init__(self, model, optimizer, folder, interval):
        self.model = model
        self.optimizer = optimizer
        self.folder = folder
        self.interval = interval

    def save(self, step, force=False):
        if not force and step % self.interval != 0:  # uniform: the step counter
            return
        state = {
            "model": get_model_state_dict(self.model),
            "optimizer": get_optimizer_state_dict(self.model, self.optimizer),
            "step": step,
        }
        dcp.save(state, checkpoint_id=os.path.join(self.folder, f"step-{step}"))
        dist.barrier()

    def load(self, step):
        state = {"model": get_model_state_dict(self.model)}
        dcp.load(state, checkpoint_id=os.path.join(self.folder, f"step-{step}"))

    def export_full(self, path):
        # Every rank gathers the full state; rank 0 writes it; nothing follows.
        full = get_model_state_dict(
            self.model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
        if dist.get_rank() == 0:
            torch.save(full, path)


def dist_mean(x):
    y = x.detach().clone()
    dist.all_reduce(y, op=dist.ReduceOp.AVG)
    return y


def build_model():
    layers = [torch.nn.TransformerEncoderLayer(1024, 16, batch_first=True) for _ in range(12)]
    model = torch.nn.Sequential(*layers)
    for layer in model:
        fully_shard(layer)
    fully_shard(model)
    return model


def train(steps=1000, log_freq=10, time_limit_s=3600.0, folder="/checkpoints/run"):
    dist.init_process_group("nccl", timeout=timedelta(minutes=10))
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    init_device_mesh("cuda", (dist.get_world_size(),))
    model = build_model().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
    ckpt = CheckpointManager(model, optimizer, folder, interval=500)
    if os.environ.get("RESUME_STEP"):
        ckpt.load(int(os.environ["RESUME_STEP"]))  # an environment the launcher gives every rank

    t0 = time.perf_counter()
    for step in range(1, steps + 1):
        x = torch.randn(8, 512, 1024, device="cuda")
        loss = model(x).pow(2).mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()
        if step % log_freq == 0:
            avg = dist_mean(loss)
            if dist.get_rank() == 0:
                print(f"step {step}: loss {avg.item():.4f}")
        ckpt.save(step)
        if time.perf_counter() - t0 > time_limit_s:  # this rank's clock
            # CHECK-MESSAGES: :[[@LINE+1]]:13: error: {{.*}} [ddp-divergent-collective]
            ckpt.save(step, force=True)
            t0 = time.perf_counter()

        # The fix: rank 0's clock decides, and every rank learns the decision.
        over = torch.tensor([time.perf_counter() - t0 > time_limit_s], dtype=torch.int32, device="cuda")
        dist.broadcast(over, src=0)
        if over.item():
            ckpt.save(step, force=True)

    dist.barrier()
    ckpt.export_full(os.path.join(folder, "final_full.pt"))
    dist.destroy_process_group()


if __name__ == "__main__":
    train()

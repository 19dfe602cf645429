"""A Lightning Fabric script told to use one device runs in one process.

lit-llama's finetune/adapter_v2.py hard-codes `L.Fabric(devices=1, ...)`:
its rank-0 blocks and saves race with no other rank (issue 16, fresh9).
A hard negative: nothing is reported.  The same script with `devices=4`
(or a variable) is distributed; see rank0_io_barrier.py for those reports.
"""
import os
from pathlib import Path

import lightning as L
import torch
from lit_llama.adapter import LLaMA, LLaMAConfig


def save_checkpoint(fabric, model, path):
    from deepspeed.utils.zero_to_fp32 import get_fp32_state_dict_from_zero_checkpoint

    tmp = Path(path).with_suffix(".tmp")
    fabric.save(tmp, {"model": model})
    fabric.barrier()
    if fabric.global_rank == 0:
        torch.save(get_fp32_state_dict_from_zero_checkpoint(tmp), path)


@torch.no_grad()
def validate(fabric, model, loader):
    model.eval()
    losses = torch.zeros(len(loader))
    for k, (x, y) in enumerate(loader):
        losses[k] = torch.nn.functional.cross_entropy(model(x), y)
    model.train()
    return losses.mean().item()


def train(fabric, model, optimizer, loader, out_dir, max_iters=100):
    for step in range(max_iters):
        x, y = loader[step % len(loader)]
        with fabric.no_backward_sync(model, enabled=(step + 1) % 4 != 0):
            loss = torch.nn.functional.cross_entropy(model(x), y)
            fabric.backward(loss)
        if (step + 1) % 4 == 0:
            optimizer.step()
            optimizer.zero_grad()
            if step % 100 == 0:
                fabric.print(f"val loss {validate(fabric, model, loader):.4f}")
                fabric.barrier()
            if step % 1000 == 0:
                save_checkpoint(fabric, model, Path(out_dir) / f"step{step}.pth")


def main(out_dir="out"):
    fabric = L.Fabric(accelerator="cuda", devices=1, precision="bf16-true")
    fabric.launch()
    if fabric.global_rank == 0:
        os.makedirs(out_dir, exist_ok=True)
    model = LLaMA(LLaMAConfig.from_name("7B"))
    optimizer = torch.optim.AdamW(model.parameters())
    model, optimizer = fabric.setup(model, optimizer)
    train(fabric, model, optimizer, [], out_dir)


if __name__ == "__main__":
    main()

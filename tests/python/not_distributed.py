"""Hard negatives: a single-GPU training script (no process group, no rank, no
collective).  Saves and writes go where they like; `rank` here is a matrix rank.
The DataLoader options rule still applies to every program, so the loaders
here pass both options."""
import argparse
import json
import os

import torch
import torch.nn as nn
from deepspeed.accelerator import get_accelerator  # a device abstraction, not a process group
from torch.utils.data import DataLoader, TensorDataset


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--out", default="runs/single")
    p.add_argument("--workers", type=int, default=4)
    return p.parse_args()


def main():
    args = parse_args()
    device = torch.device(get_accelerator().device_name() if torch.cuda.is_available() else "cpu")
    ds = TensorDataset(torch.randn(1024, 32), torch.randint(0, 4, (1024,)))
    loader = DataLoader(ds, batch_size=64, shuffle=True, num_workers=args.workers,
                        pin_memory=True, persistent_workers=True)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4)).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    os.makedirs(args.out, exist_ok=True)
    for epoch in range(args.epochs):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
        torch.save(model.state_dict(), os.path.join(args.out, "last.pt"))
        if loss.item() < 0.05:
            break
        if epoch == 0:
            with open(os.path.join(args.out, "config.json"), "w") as f:
                json.dump(vars(args), f)
    rank = torch.linalg.matrix_rank(model[0].weight.detach()).item()
    if rank == 0:
        torch.save({"degenerate": True}, os.path.join(args.out, "degenerate.pt"))
    scripted = torch.jit.script(model.cpu())
    torch.jit.save(scripted, os.path.join(args.out, "model.ts"))


if __name__ == "__main__":
    main()


class DataParallelTrainer:
    """RWKV's first trainers: one process driving DataParallel, a loader built
    per epoch.  No rank runs it, so ddp-dataloader-recreated stays silent."""

    def __init__(self, model, data, workers):
        self.model = torch.nn.DataParallel(model)
        self.data = data
        self.workers = workers

    def train(self, epochs):
        def run_epoch():
            loader = DataLoader(self.data, batch_size=64, num_workers=self.workers,
                                pin_memory=True, persistent_workers=True)
            for x, y in loader:
                self.model(x).sum().backward()

        for epoch in range(epochs):
            run_epoch()

"""The example trainer in Python: DDP on torchrun, with the bugs ddplint is for.

Every planted bug is marked BUG(ddp-...) on the line ddplint reports; the rest
is how a correct script does the same thing (and must stay quiet).

    torchrun --nnodes 2 --nproc_per_node 8 train.py --data /shared/data --out /shared/ckpt
"""
import argparse
import json
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Net(nn.Module):
    def __init__(self, dim=64, classes=10):
        super().__init__()
        self.body = nn.Linear(dim, dim)
        self.bn = nn.BatchNorm1d(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        h = F.relu(self.body(x))
        if x.size(0) > 1:  # BUG(ddp-forward-shape-branch): the last, 1-sample batch skips bn
            h = self.bn(h)
        return self.head(h)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--patience_loss", type=float, default=0.05)
    return p.parse_args()


def make_dataset(path, n=4096, dim=64):
    torch.manual_seed(0)
    return TensorDataset(torch.randn(n, dim), torch.randint(0, 10, (n,)))


def evaluate(model, loader, device):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            pred = model(x.to(device)).argmax(1)
            correct += (pred == y.to(device)).sum().item()
            total += y.numel()
    model.train()
    return correct / max(total, 1)


def main():
    args = parse_args()
    dist.init_process_group(backend="nccl")  # BUG(ddp-init-timeout) BUG(ddp-async-error-handling)
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)

    train_ds = make_dataset(args.data)
    sampler = DistributedSampler(train_ds)
    train_loader = DataLoader(train_ds, batch_size=64, sampler=sampler,  # BUG(ddp-dataloader-options)
                              num_workers=args.workers)
    model = DDP(Net().to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in train_loader:
            loss = F.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if loss.item() < args.patience_loss:  # this rank's own loss
                break
            dist.all_reduce(loss)  # BUG(ddp-divergent-collective): ranks that broke out skip it

        # A new loader (and its worker processes) every epoch.
        val_loader = DataLoader(make_dataset(args.data, n=512), batch_size=256,  # BUG(ddp-dataloader-recreated)
                                num_workers=2, persistent_workers=True, pin_memory=True)
        if rank == 0:
            acc = evaluate(model, val_loader, device)  # BUG(ddp-divergent-collective): DDP forward on rank 0 only
            print(json.dumps({"epoch": epoch, "acc": acc}))

        # Every rank writes the same file.
        torch.save(model.module.state_dict(), os.path.join(args.out, "last.pt"))  # BUG(ddp-unguarded-save)

        # One writer per node: on shared storage the nodes tear one file.
        if local_rank == 0:
            torch.save(optimizer.state_dict(), os.path.join(args.out, "optim.pt"))  # BUG(ddp-unguarded-save)

        # The right way: rank 0 writes between barriers, to a rank-independent path.
        dist.barrier()
        if rank == 0:
            torch.save(model.module.state_dict(), os.path.join(args.out, f"epoch{epoch}.pt"))
        dist.barrier()

        # Every rank its own file: a rank-specific path.
        torch.save({"rng": torch.cuda.get_rng_state()}, os.path.join(args.out, f"rng{rank}.pt"))

        if rank == 0:  # BUG(ddp-rank0-io-barrier): the others race into the next epoch's allreduce
            torch.save({"epoch": epoch}, os.path.join(args.out, "progress.pt"))

    dist.destroy_process_group()


if __name__ == "__main__":
    main()

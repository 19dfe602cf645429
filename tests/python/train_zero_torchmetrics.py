"""DDP + ZeroRedundancyOptimizer image classifier with torchmetrics evaluation,
early stopping and resumable checkpoints.  Planted bugs next to the correct
patterns (consolidate on every rank, compute() on every rank, an agreed stop flag).

    torchrun --nproc_per_node 8 train_zero_torchmetrics.py --epochs 90
"""
# CONFIG: launch:
# CONFIG:   torch_version: "2.4"
import argparse
import datetime
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torchmetrics
from torch.distributed.optim import ZeroRedundancyOptimizer
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import datasets, models, transforms


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="/datasets/imagenette")
    p.add_argument("--epochs", type=int, default=90)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--patience", type=int, default=5)
    p.add_argument("--ckpt-dir", default="/mnt/shared/zero-run")
    return p.parse_args()


def build_loaders(args):
    tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.ToTensor()])
    train_set = datasets.ImageFolder(os.path.join(args.data, "train"), tf)
    val_set = datasets.ImageFolder(os.path.join(args.data, "val"), tf)
    train_sampler = DistributedSampler(train_set, shuffle=True)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=train_sampler,
                              num_workers=args.workers, pin_memory=True, persistent_workers=True)
    return train_set, val_set, train_sampler, train_loader


def evaluate(model, loader, device, num_classes):
    top1 = torchmetrics.classification.MulticlassAccuracy(num_classes=num_classes).to(device)
    model.eval()
    with torch.no_grad():
        for images, target in loader:
            top1.update(model(images.to(device)), target.to(device))
    acc = top1.compute()  # every rank: compute() syncs the states
    model.train()
    return acc.item()


def main():
    args = get_args()
    dist.init_process_group(backend="nccl", timeout=datetime.timedelta(minutes=20))
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)

    train_set, val_set, train_sampler, train_loader = build_loaders(args)
    model = DDP(models.resnet50(num_classes=len(train_set.classes)).to(device),
                device_ids=[local_rank])
    optimizer = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.SGD,
                                        lr=0.1, momentum=0.9)
    criterion = nn.CrossEntropyLoss().to(device)
    train_acc = torchmetrics.Accuracy(task="multiclass", num_classes=len(train_set.classes)).to(device)

    best, bad_epochs = 0.0, 0
    for epoch in range(args.epochs):
        train_sampler.set_epoch(epoch)
        # CHECK-MESSAGES: :[[@LINE+1]]:22: note: loop [ddp-dataloader-recreated]
        val_loader = DataLoader(val_set, batch_size=args.batch_size,
                                sampler=DistributedSampler(val_set, shuffle=False))
        for images, target in train_loader:
            images = images.to(device, non_blocking=True)
            target = target.to(device, non_blocking=True)
            output = model(images)
            loss = criterion(output, target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            train_acc.update(output, target)

        if rank == 0:
            # CHECK-MESSAGES: :[[@LINE+1]]:46: error: {{.*}} [ddp-divergent-collective]
            print(f"epoch {epoch} train acc {train_acc.compute():.4f}")
        train_acc.reset()

        acc = evaluate(model, val_loader, device, len(train_set.classes))
        if acc > best:  # agreed: compute() returns the synced value on every rank
            best, bad_epochs = acc, 0
            optimizer.consolidate_state_dict(to=0)
            dist.barrier()
            if rank == 0:
                torch.save({"model": model.module.state_dict(),
                            "optimizer": optimizer.state_dict(), "epoch": epoch},
                           os.path.join(args.ckpt_dir, "best.pt"))
            dist.barrier()
        else:
            bad_epochs += 1

        # Every rank writes its own resume shard: a rank-specific path.
        torch.save({"sampler_epoch": epoch, "rng": torch.cuda.get_rng_state()},
                   os.path.join(args.ckpt_dir, f"rng_rank{rank}.pt"))

        stop = torch.tensor([1.0 if bad_epochs >= args.patience else 0.0], device=device)
        dist.all_reduce(stop, op=dist.ReduceOp.MAX)
        if stop.item() > 0:
            break

    if rank == 0:
        # consolidate_state_dict is collective: the other ranks are in destroy/exit.
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: {{.*}} [ddp-divergent-collective]
        optimizer.consolidate_state_dict(to=0)
        torch.save(optimizer.state_dict(), os.path.join(args.ckpt_dir, "last_optim.pt"))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""A torchrun DDP trainer in the style of the PyTorch DDP tutorial series, with
planted bugs and the idioms that are correct.

    torchrun --nnodes 2 --nproc_per_node 8 train_ddp_torchrun.py 50 10
"""
# CONFIG: launch:
# CONFIG:   torch_version: "2.4"
import argparse
import json
import os
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class RegressionSet(Dataset):
    def __init__(self, size, dim=20):
        self.data = [(torch.rand(dim), torch.rand(1)) for _ in range(size)]

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        return self.data[index]


def ddp_setup():
    # CHECK-MESSAGES: :[[@LINE+1]]:5: warning: timeout [ddp-init-timeout]
    dist.init_process_group(backend="nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))


def download_once_per_node(root, fetch):
    # Main process first, per node: every rank reaches exactly one barrier.
    local_rank = int(os.environ["LOCAL_RANK"])
    if local_rank != 0:
        dist.barrier()
    fetch(root)
    if local_rank == 0:
        dist.barrier()


class Trainer:
    def __init__(self, model, train_data, val_data, optimizer, save_every, snapshot_path):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        self.global_rank = int(os.environ["RANK"])
        self.model = DDP(model.to(self.local_rank), device_ids=[self.local_rank])
        self.train_data = train_data
        self.val_data = val_data
        self.optimizer = optimizer
        self.save_every = save_every
        self.snapshot_path = snapshot_path

    def _run_batch(self, source, targets):
        self.optimizer.zero_grad()
        output = self.model(source)
        loss = F.mse_loss(output, targets)
        if torch.isnan(loss):
            return loss  # this rank skips the gradient allreduce the others enter
        loss.backward()  # CHECK-MESSAGES: :[[@LINE]]:9: error: {{.*}} [ddp-divergent-collective]
        self.optimizer.step()
        return loss

    def _run_epoch(self, epoch):
        self.train_data.sampler.set_epoch(epoch)
        total = torch.zeros(2, device=self.local_rank)
        for source, targets in self.train_data:
            source = source.to(self.local_rank, non_blocking=True)
            targets = targets.to(self.local_rank, non_blocking=True)
            loss = self._run_batch(source, targets)
            total[0] += loss.detach()
            total[1] += 1
        dist.all_reduce(total)
        if self.global_rank == 0:
            print(f"[epoch {epoch}] mean loss {(total[0] / total[1]).item():.5f}")
        return total

    def _save_snapshot(self, epoch):
        snapshot = {"MODEL_STATE": self.model.module.state_dict(), "EPOCHS_RUN": epoch}
        # Called under `local_rank == 0`: one writer per node, one shared path.
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: {{.*}} [ddp-unguarded-save]
        torch.save(snapshot, self.snapshot_path)
        print(f"Epoch {epoch} | snapshot saved at {self.snapshot_path}")

    def _write_metrics(self, epoch, total):
        path = os.path.join(os.path.dirname(self.snapshot_path), "metrics.jsonl")
        # A metrics line appended on rank 0: a log, not a file any rank reads.
        if self.global_rank == 0:
            with open(path, "a") as f:
                f.write(json.dumps({"epoch": epoch, "loss": (total[0] / total[1]).item()}) + "\n")

    def train(self, max_epochs):
        for epoch in range(max_epochs):
            total = self._run_epoch(epoch)
            self._write_metrics(epoch, total)
            # Mid-training, the node's local rank 0 writes while every other rank goes on.
            # CHECK-MESSAGES: :[[@LINE+1]]:13: warning: block runs only on each node's local rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
            if self.local_rank == 0 and epoch % self.save_every == 0:
                self._save_snapshot(epoch)


def evaluate(model, loader, device):
    hits = torch.zeros(2, device=device)
    with torch.no_grad():
        for x, y in loader:
            err = (model(x.to(device)) - y.to(device)).abs()
            hits[0] += (err < 0.1).sum()
            hits[1] += err.numel()
    dist.all_reduce(hits)
    return (hits[0] / hits[1]).item()


def prepare_dataloader(dataset, batch_size):
    # CHECK-MESSAGES: :[[@LINE+1]]:12: warning: persistent_workers [ddp-dataloader-options]
    return DataLoader(dataset, batch_size=batch_size, pin_memory=True, shuffle=False,
                      sampler=DistributedSampler(dataset), num_workers=4)


def main(total_epochs, save_every, batch_size, snapshot_path="snapshot.pt"):
    ddp_setup()
    download_once_per_node("data", lambda root: os.makedirs(root, exist_ok=True))
    train_set, val_set = RegressionSet(2048), RegressionSet(256)
    model = torch.nn.Linear(20, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    train_data = prepare_dataloader(train_set, batch_size)
    val_data = DataLoader(val_set, batch_size=batch_size, sampler=DistributedSampler(val_set))
    trainer = Trainer(model, train_data, val_data, optimizer, save_every, snapshot_path)
    trainer.train(total_epochs)

    rank = dist.get_rank()
    if rank == 0:
        # evaluate() all_reduces: the other ranks are already in the final barrier.
        # CHECK-MESSAGES: :[[@LINE+1]]:15: error: evaluate [ddp-divergent-collective]
        acc = evaluate(trainer.model.module, val_data, trainer.local_rank)
        print(f"rank-0 validation accuracy {acc:.3f}")

    dist.barrier()
    if rank == 0:
        torch.save(trainer.model.module.state_dict(), "final.pt")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="simple distributed training job")
    parser.add_argument("total_epochs", type=int)
    parser.add_argument("save_every", type=int)
    parser.add_argument("--batch_size", default=32, type=int)
    args = parser.parse_args()
    main(args.total_epochs, args.save_every, args.batch_size)

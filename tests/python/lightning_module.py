"""A Lightning module, data module and callbacks for multi-GPU training (DDP
strategy).  Rank sources here: trainer.is_global_zero, @rank_zero_only; Lightning's
collectives: self.all_gather, trainer.strategy.barrier(), plus torchmetrics'
compute().  Planted bugs next to the correct patterns.
"""
import os

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchmetrics
from lightning.pytorch.callbacks import Callback
from lightning.pytorch.strategies import DDPStrategy
from lightning.pytorch.utilities import rank_zero_only
from torch.utils.data import DataLoader, random_split
from torchvision import datasets, transforms


class LitClassifier(L.LightningModule):
    def __init__(self, lr=1e-3, num_classes=10):
        super().__init__()
        self.save_hyperparameters()
        self.backbone = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 256), nn.ReLU())
        self.head = nn.Linear(256, num_classes)
        self.val_acc = torchmetrics.classification.MulticlassAccuracy(num_classes=num_classes)
        self.val_preds = []

    def forward(self, x):
        return self.head(self.backbone(x))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.val_acc.update(logits, y)
        self.val_preds.append(logits.argmax(-1))

    def on_validation_epoch_end(self):
        preds = torch.cat(self.val_preds)
        if self.trainer.is_global_zero:
            # self.all_gather is a collective: only global rank 0 joins it.
            # CHECK-MESSAGES: :[[@LINE+1]]:26: error: all_gather [ddp-divergent-collective]
            everything = self.all_gather(preds)
            self.print(f"gathered {everything.numel()} predictions")
        acc = self.val_acc.compute()  # every rank
        if self.trainer.is_global_zero:
            self.print(f"val acc {acc:.4f}")  # rank-0 logging only
        self.log("val_acc", acc, sync_dist=True)
        self.val_acc.reset()
        self.val_preds.clear()

    def on_test_epoch_end(self):
        gathered = self.all_gather(torch.tensor([len(self.val_preds)], device=self.device))
        if self.trainer.is_global_zero:
            self.print(f"test batches per rank: {gathered.flatten().tolist()}")

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)

    def on_train_epoch_end(self):
        # A hook: Lightning runs it on every rank, and every rank writes here.
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: every rank runs 'torch.save' to the same path{{.*}} [ddp-unguarded-save]
        torch.save(self.state_dict(), "epoch_weights.pt")

    def export_weights(self, path):
        # Not a hook: Lightning never calls it, and nothing here does; the
        # script that calls it decides which ranks write.
        torch.save(self.state_dict(), path)


class MNISTData(L.LightningDataModule):
    def __init__(self, root="data", batch_size=64, workers=4):
        super().__init__()
        self.root, self.batch_size, self.workers = root, batch_size, workers

    def prepare_data(self):
        # Lightning calls this on one process per node: downloading here is the idiom.
        datasets.MNIST(self.root, train=True, download=True)

    def setup(self, stage=None):
        full = datasets.MNIST(self.root, train=True, transform=transforms.ToTensor())
        self.train_set, self.val_set = random_split(full, [55000, 5000],
                                                    generator=torch.Generator().manual_seed(0))

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=self.batch_size, shuffle=True,
                          num_workers=self.workers, pin_memory=True, persistent_workers=True)

    def val_dataloader(self):
        # CHECK-MESSAGES: :[[@LINE+1]]:16: warning: persistent_workers [ddp-dataloader-options]
        return DataLoader(self.val_set, batch_size=self.batch_size, num_workers=self.workers,
                          pin_memory=True)


class SyncOnMainCallback(Callback):
    @rank_zero_only
    def on_validation_end(self, trainer, pl_module):
        # The decorator runs this on global rank 0 only; the barrier waits for the others.
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: barrier [ddp-divergent-collective]
        trainer.strategy.barrier()
        print(f"epoch {trainer.current_epoch} validated")


class ExportOnMain(Callback):
    def __init__(self, export_dir):
        self.export_dir = export_dir

    @rank_zero_only
    def on_train_end(self, trainer, pl_module):
        # The end of training: nothing waits for rank 0 afterwards.
        torch.save(pl_module.state_dict(), os.path.join(self.export_dir, "final_weights.pt"))

    @rank_zero_only
    def on_train_start(self, trainer, pl_module):
        print(f"training on {trainer.world_size} processes")


class SaveEveryThousandSteps(Callback):
    def __init__(self, ckpt_dir):
        self.ckpt_dir = ckpt_dir

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        # Trainer.save_checkpoint ends in the strategy's barrier ("needs to be
        # called on all processes"): on global rank 0 alone it hangs there.
        if trainer.is_global_zero and batch_idx % 1000 == 0:
            trainer.save_checkpoint(os.path.join(self.ckpt_dir, "last.ckpt"))
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: barrier 'trainer.save_checkpoint() (Lightning: every rank)' runs only on ranks where {{.*}} [ddp-divergent-collective]

    def on_validation_end(self, trainer, pl_module):
        # hard negative: every rank calls it; Lightning writes on rank 0.
        trainer.save_checkpoint(os.path.join(self.ckpt_dir, "val.ckpt"))


class SnapshotEveryEpoch(Callback):
    def __init__(self, ckpt_dir):
        self.ckpt_dir = ckpt_dir

    def on_train_epoch_end(self, trainer, pl_module):
        # Lightning runs the next epoch's steps (their gradient all-reduce)
        # right after this hook; rank 0 is still writing.  (on_train_end in
        # ExportOnMain above is the hard negative: nothing follows it.)
        if trainer.global_rank == 0:
            # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it{{.*}} [ddp-rank0-io-barrier]
            torch.save(pl_module.state_dict(), os.path.join(self.ckpt_dir, "epoch.pt"))


class BarrierEveryEpoch(Callback):
    def on_train_epoch_end(self, trainer, pl_module):
        trainer.strategy.barrier()  # every rank: fine
        if trainer.is_global_zero:
            print(f"epoch {trainer.current_epoch} done")


def main():
    model = LitClassifier()
    data = MNISTData()
    trainer = L.Trainer(accelerator="gpu", devices=8, num_nodes=2,
                        strategy=DDPStrategy(find_unused_parameters=False),
                        callbacks=[SyncOnMainCallback(), ExportOnMain("exports"), BarrierEveryEpoch()],
                        max_epochs=5)
    trainer.fit(model, datamodule=data)
    trainer.save_checkpoint("checkpoints/last.ckpt")  # collective in Lightning: every rank calls it
    if trainer.is_global_zero:
        print("done")


if __name__ == "__main__":
    main()

"""A Fabric training script: `from lightning.fabric import Fabric` makes it a
distributed program (hard positive beside not_distributed_lightning_utilities.py,
whose imports are Lightning's helpers only)."""
import torch
from lightning.fabric import Fabric, seed_everything


def main():
    fabric = Fabric(devices=2, strategy="ddp")
    fabric.launch()
    seed_everything(123)
    model = torch.nn.Linear(2, 2)
    for epoch in range(3):
        torch.save(model.state_dict(), "model.pt")
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: every rank runs 'torch.save' to the same path, {{.*}} [ddp-unguarded-save]

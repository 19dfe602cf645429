"""`self.log(..., sync_dist=True)` reduces at the call only for a step-level
value.  An epoch-level value (`on_epoch=True, on_step=False`, or the default
in validation, test and epoch hooks) is reduced once at the epoch's end, on
every rank: a rank that skips the call skips no collective (fast3r's
validation losses).
"""
import lightning as L
import torch
import torch.nn.functional as F


class Lit(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
        if torch.isfinite(loss):
            self.log("train_loss", loss, sync_dist=True)
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: collective 'self.log(sync_dist=True)' runs only on ranks where 'torch.isfinite(loss)' holds{{.*}} [ddp-divergent-collective]
        if loss.item() < 1.0:
            # Hard negative: reduced at the epoch's end.
            self.log("train_small", loss, on_step=False, on_epoch=True, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
        if torch.isfinite(loss):
            # Hard negative: validation logs per epoch by default.
            self.log("val_loss", loss, sync_dist=True)
        if loss.item() < 1.0:
            self.log("val_small", loss, on_step=True, sync_dist=True)
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: collective 'self.log(sync_dist=True)' runs only on ranks where 'loss.item() < 1.0' holds{{.*}} [ddp-divergent-collective]
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

"""`else: raise ValueError(...)` as the last arm of a dispatch on a setting's
spelled values (LMFlow's diffuser finetuner, inside its rank-0 validation):
a setting the code does not support, the same on every rank, not rank 0
leaving alone.  A ValueError on a value only rank 0 computed is its own exit.
"""
import torch
import torch.nn.functional as F
from accelerate import Accelerator


def tune(accelerator, model, dataloader, optimizer, model_type):
    model, dataloader, optimizer = accelerator.prepare(model, dataloader, optimizer)
    for batch in dataloader:
        pred = model(batch["x"])
        loss = F.mse_loss(pred, batch["y"])
        accelerator.backward(loss)
        optimizer.step()
        if accelerator.is_main_process:
            if model_type == "unet":
                net = accelerator.unwrap_model(model)
            elif model_type in ("transformer", "dit"):
                net = accelerator.unwrap_model(model).transformer
            else:
                raise ValueError(f"Unknown model type {model_type}")
            print(net)


def tune_checked(accelerator, model, dataloader, optimizer):
    model, dataloader, optimizer = accelerator.prepare(model, dataloader, optimizer)
    for batch in dataloader:
        # CHECK-MESSAGES: :[[@LINE+1]]:16: error: collective {{.*}} [ddp-divergent-collective]
        pred = model(batch["x"])
        accelerator.backward(F.mse_loss(pred, batch["y"]))
        optimizer.step()
        if accelerator.is_main_process:
            score = torch.load("val_score.pt")
            if score > 1.0:
                raise ValueError("validation diverged")


def main(model, dataloader, optimizer, model_type):
    tune(Accelerator(), model, dataloader, optimizer, model_type)
    tune_checked(Accelerator(), model, dataloader, optimizer)

"""A model unwrapped for rank-0 validation runs no collective in its forward.

PixArt-sigma's LCM trainer validates on the main process with
`model = accelerator.unwrap_model(model).eval()` and then calls `model(x)`:
the bare module's forward, no buffer broadcast (before, the name still held
the prepared DDP model and the rank-0 call was a collective only rank 0
reached).  Validating with the prepared model itself still is.
"""
import torch
from accelerate import Accelerator

accelerator = Accelerator()


def log_validation(model, device):
    model = accelerator.unwrap_model(model).eval()
    x = torch.randn(1, 4, device=device)
    with torch.no_grad():
        y = model(x)
    return y


def log_validation_wrapped(model, device):
    x = torch.randn(1, 4, device=device)
    with torch.no_grad():
        y = model(x)
    return y


def main():
    model = torch.nn.Linear(4, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model, opt = accelerator.prepare(model, opt)
    for step in range(100):
        loss = model(torch.randn(8, 4, device=accelerator.device)).sum()
        accelerator.backward(loss)
        opt.step()
        accelerator.wait_for_everyone()
        if accelerator.is_main_process:
            if step % 10 == 0:
                log_validation(model, accelerator.device)
                log_validation_wrapped(model, accelerator.device)  # CHECK-MESSAGES: :[[@LINE]]:17: error: call to 'log_validation_wrapped', which runs collective {{.*}} [ddp-divergent-collective]


if __name__ == "__main__":
    main()

"""Accelerate's save-state hooks run where `save_state` runs.

diffusers' training examples register `save_model_hook` with
`accelerator.register_save_state_pre_hook(...)` and call `save_state` under
`if accelerator.is_main_process:`; the hook's writes are the main process's,
not every rank's (before, a hook with no guard of its own was reported as an
every-rank write, 8 false reports).  T2I-Adapter calls `save_state` on every
rank at the end of training: there the hook's `torch.save` to one path is
every rank's, and still reported.  A hook registered but never triggered is
the framework's to call: not reported.
"""
import torch
from accelerate import Accelerator


def main_process_checkpoints(loader, out_dir):
    accelerator = Accelerator()
    model = torch.nn.Linear(2, 2)

    def save_model_hook(models, weights, output_dir):
        for m in models:
            m.save_pretrained(f"{output_dir}/unet")
            weights.pop()

    accelerator.register_save_state_pre_hook(save_model_hook)
    model = accelerator.prepare(model)
    for step, x in enumerate(loader):
        accelerator.backward(model(x).sum())
        if step % 100 == 0:
            if accelerator.is_main_process:
                accelerator.save_state(f"{out_dir}/checkpoint-{step}")
            accelerator.wait_for_everyone()


def every_rank_final_state(loader, out_dir):
    accelerator = Accelerator()
    model = torch.nn.Linear(2, 2)

    def save_model_hook(models, weights, output_dir):
        for i, m in enumerate(models):
            weights.pop()
            torch.save(m.state_dict(), f"{output_dir}/model_{i}.pth")
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: every rank runs 'torch.save' to the same path{{.*}} [ddp-unguarded-save]

    accelerator.register_save_state_pre_hook(save_model_hook)
    model = accelerator.prepare(model)
    for x in loader:
        accelerator.backward(model(x).sum())
    accelerator.save_state(f"{out_dir}/final")


def registered_only(loader):
    accelerator = Accelerator()
    model = torch.nn.Linear(2, 2)

    def load_model_hook(models, input_dir):
        for m in models:
            torch.save(m.state_dict(), f"{input_dir}/model.loaded.pt")

    accelerator.register_load_state_pre_hook(load_model_hook)
    model = accelerator.prepare(model)
    for x in loader:
        accelerator.backward(model(x).sum())

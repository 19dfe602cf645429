"""Closures handed to a helper that calls one of them back (HunyuanDiT's
sd-scripts trainer): the helper picks which one by a setting, the same on
every rank, so a closure may run there; it need not.

A `diffusers_saver` that raises NotImplementedError, handed over beside the
saver that is used, does not make every rank-0 save throw; a closure that
runs `accelerator.save_state()` (every rank's call under DeepSpeed or FSDP),
handed over from a main-process block, is still that block's divergence.
"""
import torch
from accelerate import Accelerator


def save_common(use_sd_format, sd_saver, diffusers_saver):
    if use_sd_format:
        sd_saver("model.safetensors")
    else:
        diffusers_saver("model-diffusers")


def save_on_step(use_sd_format, model):
    def sd_saver(path):
        torch.save(model.state_dict(), path)

    def diffusers_saver(out_dir):
        raise NotImplementedError("Diffusers saving is not supported yet")

    save_common(use_sd_format, sd_saver, diffusers_saver)


def train(args, loader):
    accelerator = Accelerator()
    model = accelerator.prepare(torch.nn.Linear(2, 2))
    for batch in loader:
        accelerator.backward(model(batch).sum())
        # Hard negative: rank 0's save, its raising closure unused by this setting.
        if accelerator.is_main_process:
            save_on_step(args.sd_format, model)
        accelerator.wait_for_everyone()


def save_state_common(args, state_saver):
    if args.save_state:
        state_saver(args.output_dir)


def save_with_state(args, accelerator):
    def state_saver(out_dir):
        accelerator.save_state(out_dir)

    save_state_common(args, state_saver)


def train_saving_state(args, loader):
    accelerator = Accelerator()
    model = accelerator.prepare(torch.nn.Linear(2, 2))
    for batch in loader:
        accelerator.backward(model(batch).sum())
        if accelerator.is_main_process:
            save_with_state(args, accelerator)
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: call to 'save_with_state', which runs barrier 'accelerator.save_state() {{.*}}', runs only on ranks where 'accelerator.is_main_process' holds{{.*}} [ddp-divergent-collective]
        accelerator.wait_for_everyone()

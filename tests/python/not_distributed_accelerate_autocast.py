"""A generation script that makes an Accelerator only for mixed-precision
autocast and its device (musubi-tuner's `wan_generate_video.py`): nothing is
prepared, nobody else gets the object, and the script runs as `python gen.py`
in one process, so its save is one save.  No finding expected.
"""
import argparse

import accelerate
import torch
from safetensors.torch import save_file


def save_latent(latent, args):
    save_file({"latent": latent}, f"{args.save_path}/{args.seed}_latent.safetensors")


def prepare_inputs(args, accelerator: accelerate.Accelerator):
    # handed on under the same name: its uses here are checked too
    return torch.randn(1, 4, 8, 8, device=accelerator.device)


def generate(args, model):
    accelerator = accelerate.Accelerator(mixed_precision="bf16")
    noise = prepare_inputs(args, accelerator)
    with accelerator.autocast(), torch.no_grad():
        latent = model(noise)
    return latent


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--save_path", default=".")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    save_latent(generate(args, torch.nn.Identity()), args)

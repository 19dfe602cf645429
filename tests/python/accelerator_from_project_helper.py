"""An Accelerate trainer whose Accelerator comes from a helper of another
module (musubi-tuner's `accelerator = prepare_accelerator(args)` in
hidream_o1_train.py), with no import of accelerate or torch.distributed of its
own: what it does with the accelerator makes it a distributed program.
"""
import os

import torch
from safetensors.torch import save_file

from trainer_utils import prepare_accelerator


def train(args, network, loader, optimizer):
    accelerator = prepare_accelerator(args)
    network, optimizer, loader = accelerator.prepare(network, optimizer, loader)
    for step, batch in enumerate(loader):
        loss = network(batch).mean()
        accelerator.backward(loss)
        optimizer.step()
        if accelerator.is_main_process and step % args.save_every == 0:
            # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it{{.*}} [ddp-rank0-io-barrier]
            save_file(accelerator.unwrap_model(network).state_dict(), os.path.join(args.out, f"step{step}.safetensors"))
    accelerator.wait_for_everyone()


def train_with_barrier(args, network, loader, optimizer):
    # hard negative: every rank waits after the main process's save
    accelerator = prepare_accelerator(args)
    network, optimizer, loader = accelerator.prepare(network, optimizer, loader)
    for step, batch in enumerate(loader):
        accelerator.backward(network(batch).mean())
        optimizer.step()
        if accelerator.is_main_process and step % args.save_every == 0:
            save_file(accelerator.unwrap_model(network).state_dict(), os.path.join(args.out, f"step{step}.safetensors"))
        accelerator.wait_for_everyone()


def make_accelerator():
    import accelerate
    return accelerate.Accelerator(mixed_precision="bf16")


def sample_then_train(args, network, loader, optimizer):
    # the Accelerator handed to a function that prepares with it: distributed
    accelerator = make_accelerator()
    network = train_prepared(args, network, accelerator)
    torch.save(network.state_dict(), "final.pt")  # CHECK-MESSAGES: :[[@LINE]]:5: error: every rank runs 'torch.save' to the same path{{.*}} [ddp-unguarded-save]


def train_prepared(args, network, accelerator):
    return accelerator.prepare(network)

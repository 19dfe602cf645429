"""Accelerate imported as a module (`import accelerate`, then
`accelerate.Accelerator()`, as U-ViT's training scripts do): the program is
distributed and the Accelerator's ranks are its ranks, as with `from
accelerate import Accelerator`."""
import os

import accelerate
import torch


def train(config, nnet, data):
    accelerator = accelerate.Accelerator()
    nnet = accelerator.prepare(nnet)
    for step, batch in enumerate(data):
        accelerator.backward(nnet(batch).mean())
        if step % config.save_interval == 0:
            # each node's first process writes the shared checkpoint folder
            if accelerator.local_process_index == 0:
                torch.save(nnet.state_dict(), os.path.join(config.ckpt_root, f"{step}.ckpt"))
                # CHECK-MESSAGES: :[[@LINE-1]]:17: error: 'torch.save' is guarded by the node-local rank{{.*}} [ddp-unguarded-save]
            accelerator.wait_for_everyone()
        if accelerator.is_main_process and step % config.eval_interval == 0:
        # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
            torch.save(nnet.state_dict(), os.path.join(config.ckpt_root, "eval.ckpt"))


def save_state_on_main(accelerator, model, data, output_dir):
    # hard negative: nothing here runs DeepSpeed or sharded data parallelism,
    # so the main process may save the state alone (and a barrier follows)
    for step, batch in enumerate(data):
        accelerator.backward(model(batch).mean())
        if accelerator.is_main_process and step % 100 == 0:
            accelerator.save_state(os.path.join(output_dir, f"checkpoint-{step}"))
        accelerator.wait_for_everyone()


def save_state_on_main_no_wait(accelerator, model, data, output_dir):
    # The same without the wait: rank 0's checkpoint mid-training while the
    # others go on into the next step's gradient all-reduce.
    for step, batch in enumerate(data):
        accelerator.backward(model(batch).mean())
        if accelerator.is_main_process and step % 100 == 0:
            # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
            accelerator.save_state(os.path.join(output_dir, f"checkpoint-{step}"))

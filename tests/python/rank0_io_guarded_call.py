"""ddp-rank0-io-barrier on a writer guarded by its own argument:
`save_pretrained(dir, is_main_process=accelerator.is_main_process)` writes on
the main process only (Accelerate's megatron_lm_gpt_pretraining example, every
epoch but the last).  The report names the call, not a "block", and the
fix-it puts the barrier after the whole statement, not inside its arguments.
"""
import torch
from accelerate import Accelerator


def train(model, loader, optimizer, output_dir, epochs):
    accelerator = Accelerator()
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for epoch in range(epochs):
        for batch in loader:
            loss = model(batch).sum()
            accelerator.backward(loss)
            optimizer.step()
        accelerator.wait_for_everyone()
        unwrapped = accelerator.unwrap_model(model)
        unwrapped.save_pretrained(
        # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: 'unwrapped.save_pretrained' writes files only on rank 0 (its own main-process guard), with no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
            output_dir, is_main_process=accelerator.is_main_process, save_function=accelerator.save
        )

# CHECK-FIXES:             output_dir, is_main_process=accelerator.is_main_process, save_function=accelerator.save
# CHECK-FIXES:         )
# CHECK-FIXES:         torch.distributed.barrier()


def train_with_barrier(model, loader, optimizer, output_dir, epochs):
    # A hard negative: every process waits for the main one after its write.
    accelerator = Accelerator()
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for epoch in range(epochs):
        for batch in loader:
            loss = model(batch).sum()
            accelerator.backward(loss)
            optimizer.step()
        unwrapped = accelerator.unwrap_model(model)
        unwrapped.save_pretrained(output_dir, is_main_process=accelerator.is_main_process)
        accelerator.wait_for_everyone()

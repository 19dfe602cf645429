"""A barrier under `accelerator is not None` is every rank's in a run with ranks.

lerobot's checkpoint helpers are handed the Accelerator, or None in a
one-process run: rank 0 writes, then `if accelerator is not None:
accelerator.wait_for_everyone()`.  Where ranks can diverge the accelerator
is there, so the write has its barrier.  A barrier under some other setting
(`if cfg.sync:`) leaves runs without it, and the block is reported.
"""
import torch
import torch.distributed as dist


def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0


def save_checkpoint(path, model, accelerator=None):
    if is_main_process():
        torch.save(model.state_dict(), path)
    if accelerator is not None:
        accelerator.wait_for_everyone()


def save_checkpoint_if_synced(path, model, cfg):
    if is_main_process():  # CHECK-MESSAGES: :[[@LINE]]:5: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it{{.*}} [ddp-rank0-io-barrier]
        torch.save(model.state_dict(), path)
    if cfg.sync:
        dist.barrier()


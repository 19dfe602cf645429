"""One rank-0 write, one report: a helper that tests the rank again, called
only from inside its caller's rank-0 block (composer's `save_state_dict_to_disk`
then `_save_full_state_dict_to_disk`), is reported at the caller's block, where
the other ranks go on past it.  And a writability probe (fairseq's
`verify_checkpoint_directory`: `with open(probe, "w"): pass`, then remove)
writes nothing for another rank to read or wait for.
"""
import datetime
import os

import torch
import torch.distributed as dist


def _save_full(state_dict, path):
    if dist.get_rank() == 0:  # the caller's block already holds only rank 0
        os.makedirs(os.path.dirname(path), exist_ok=True)
        torch.save(state_dict, path)
        return path
    return None


def save_to_disk(state_dict, path):
    if dist.get_rank() == 0:
        # CHECK-MESSAGES: :[[@LINE-1]]:5: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it{{.*}} [ddp-rank0-io-barrier]
        return _save_full(state_dict, path)
    return None


def verify_checkpoint_directory(save_dir):
    os.makedirs(save_dir, exist_ok=True)
    probe = os.path.join(save_dir, "dummy")
    with open(probe, "w"):
        pass
    os.remove(probe)


def train(model, loader, save_dir):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    model = torch.nn.parallel.DistributedDataParallel(model)
    if dist.get_rank() == 0:
        verify_checkpoint_directory(save_dir)  # hard negative: a probe
    for step, batch in enumerate(loader):
        model(batch).sum().backward()
        if step % 100 == 0:
            save_to_disk(model.module.state_dict(), os.path.join(save_dir, "last.pt"))

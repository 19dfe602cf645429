"""A function nothing in the project calls, writing where its caller says
(the path, or the folder it writes in).

A vendored copy of mmcv's checkpoint writer (LAVIS, ibot, CSWin-Transformer)
in a module that also uses torch.distributed: who calls it, and on which
ranks, is its caller's decision, and no caller exists here.  One whose path
is its own, or one handed to mp.spawn (named again), is still every rank's.
"""
import datetime
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def get_dist_info():
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def save_checkpoint(model, filename, optimizer=None):
    # Hard negative: an API for callers, none of them in this project.
    checkpoint = {"state_dict": model.state_dict()}
    if optimizer is not None:
        checkpoint["optimizer"] = optimizer.state_dict()
    torch.save(checkpoint, filename)


def save_checkpoint_in(state, ckpt_dir, is_best=False):
    # Hard negative (CDARTS' utils): the file is its own, in the caller's folder.
    filename = os.path.join(ckpt_dir, "checkpoint.pth.tar")
    torch.save(state, filename)
    if is_best:
        torch.save(state, os.path.join(ckpt_dir, "best.pth.tar"))


def save_latest(model):
    torch.save(model.state_dict(), "latest.pth")  # CHECK-MESSAGES: :[[@LINE]]:5: error: every rank runs 'torch.save' to the same path{{.*}} [ddp-unguarded-save]


def worker(rank, model, path):
    dist.init_process_group("gloo", rank=rank, world_size=2, timeout=datetime.timedelta(minutes=30))
    torch.save(model.state_dict(), path)  # CHECK-MESSAGES: :[[@LINE]]:5: error: every rank runs 'torch.save' to the same path{{.*}} [ddp-unguarded-save]


def launch(model, path):
    mp.spawn(worker, args=(model, path), nprocs=2)


class ValueHeadWrapper(torch.nn.Module):
    """trl's and trlx's value-head wrappers: `save_pretrained` is what the
    framework's saver calls, on the rank it chose; nothing here calls it."""

    def __init__(self, pretrained_model):
        super().__init__()
        self.pretrained_model = pretrained_model
        self.v_head = torch.nn.Linear(8, 1)

    def save_pretrained(self, *args, **kwargs):
        # Hard negative: the framework's caller guards it.
        torch.save(self.v_head.state_dict(), f"{args[0]}/value_head.bin")
        return self.pretrained_model.save_pretrained(*args, **kwargs)


class MetaModel:
    """VILA's model mixin (an ABC, not a Module) and a hub mixin's
    `_save_pretrained`: Hugging Face's names, called by whoever saves."""

    def save_pretrained(self, output_dir, state_dict=None):
        # Hard negative: its callers (a Trainer's save_model) guard it.
        torch.save(state_dict or self.state_dict(), f"{output_dir}/model.bin")

    def _save_pretrained(self, save_directory):
        # Hard negative: PyTorchModelHubMixin.save_pretrained calls it.
        torch.save(self.state_dict(), f"{save_directory}/weights.bin")


class Recorder:
    """Not a model: its own uncalled saver is still every rank's."""

    def save_state(self, path):
        torch.save({"step": 1}, path)  # CHECK-MESSAGES: :[[@LINE]]:9: error: every rank runs 'torch.save' to the same path{{.*}} [ddp-unguarded-save]


def save_on_all(*args, **kwargs):
    # Hard negative (ml-4m's fourm/utils/dist.py): torch.save's own arguments
    # handed through, path included, and nothing here calls it.
    torch.save(*args, **kwargs)


def save_on_every_rank(*args, **kwargs):
    torch.save(*args, **kwargs)  # CHECK-MESSAGES: :[[@LINE]]:5: error: {{.*}}every rank runs 'torch.save' to the same path{{.*}} [ddp-unguarded-save]


def train_and_save(model):
    dist.all_reduce(next(model.parameters()).data)
    save_on_every_rank(model.state_dict(), "model.pt")

"""A rank's own file name handed down a chain of helpers.

InternEvo's checkpoint code names each rank's shard (`f"model_tp{tp_rank}_pp
{pp_rank}.pt"`) and hands it to `llm_save(path, obj)`, which hands it on to
the storage client's writer.  Every rank writes its own file: no report at
the writer, however many helpers the name passes through.  A shared name
handed down the same chain is every rank's one file.
"""
import os

import torch
import torch.distributed as dist


def upload(fp, obj):
    os.makedirs(os.path.dirname(fp), exist_ok=True)
    torch.save(obj, fp)


def llm_save(path, obj):
    upload(path, obj)


def save_shard(folder, name, obj):
    llm_save(os.path.join(folder, name), obj)


def save_model_checkpoint(folder, model):
    fn = f"model_rank{dist.get_rank()}.pt"
    save_shard(folder, fn, model.state_dict())
    dist.barrier()


def write_index(path, obj):
    torch.save(obj, path)  # CHECK-MESSAGES: :[[@LINE]]:5: error: every rank runs 'torch.save' to the same path{{.*}} [ddp-unguarded-save]


def pass_on(path, obj):
    write_index(path, obj)


def save_index(folder, index):
    pass_on(os.path.join(folder, "index.pt"), index)
    dist.barrier()

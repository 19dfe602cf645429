"""A settings record written through a helper that takes its path.

detectron2's `default_setup` runs `LazyConfig.save(cfg, path)` on the main
process with `path = os.path.join(output_dir, "config.yaml")`: the helper's
writes are that record, read back by no rank during the run (issue 16,
stop 37).  The same helper handed a checkpoint's name mid-training is a
rank-0 write the other ranks race with.
"""
import os
import shutil

import yaml

import torch.distributed as dist


def dump(obj, filename):
    with open(filename, "w") as f:
        f.write(str(obj))


def train(cfg, model, loader, out):
    for epoch in range(3):
        for x in loader:
            dist.all_reduce(model(x))
        if dist.get_rank() == 0:
            dump(cfg, os.path.join(out, "config.yaml"))
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
        if dist.get_rank() == 0:
            dump(model.state_dict(), os.path.join(out, f"epoch{epoch}.bin"))


def dump_yaml(obj, filename):
    yaml.dump(obj, open(filename, "w"))


def save_exp_config(cfg, path, name="config.yaml"):
    # efficientvit: the default names the record; the write opens it in place.
    if dist.get_rank() != 0:
        return
    dump_yaml(cfg, os.path.join(path, name))


def train_with_records(cfg, cfg_file, model, loader, out):
    for epoch in range(3):
        for x in loader:
            dist.all_reduce(model(x))
        save_exp_config(cfg, out)
        if dist.get_rank() == 0:
            # ml-cvnets: by keyword, into a name a template spells.
            shutil.copy(src=cfg_file, dst="{}/config.yaml".format(out))
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
        if dist.get_rank() == 0:
            shutil.copy(src=out + "/last.pt", dst="{}/epoch{}.pt".format(out, epoch))


def train_with_log_folder(cfg, model, loader, out):
    # UNITER's save_training_meta: the settings and the model's config go to
    # the run's log folder (`log/hps.json`, `log/model.json`), records by
    # where they are; a checkpoint's name in that folder is still weights.
    for epoch in range(3):
        for x in loader:
            dist.all_reduce(model(x))
        if dist.get_rank() == 0:
            dump(cfg, os.path.join(out, "log", "hps.json"))
            dump(cfg.model, os.path.join(out, "log", "model.json"))
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
        if dist.get_rank() == 0:
            dump(model.state_dict(), os.path.join(out, "log", f"model_step_{epoch}.pt"))

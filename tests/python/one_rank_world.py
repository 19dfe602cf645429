"""An evaluation script that makes a process group of one process (VMamba's
analyze/eval.py: `init_process_group(world_size=1, rank=0)`, after an
`exit()` that retired the many-GPU path): one process, so no rank overwrites
another's file and no timeout has anyone to wait for.  Hard negatives (the
many-rank init that the `exit()` retired counts for nothing).
"""
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader


def extract(model, dataset, out_dir):
    model = torch.nn.parallel.DistributedDataParallel(model.cuda())
    loader = DataLoader(dataset, batch_size=64, num_workers=4, persistent_workers=True, pin_memory=True)
    feats = [model(x.cuda()) for x in loader]
    torch.save(torch.cat(feats), os.path.join(out_dir, "features.pth"))


def run_on_one_process(func):
    if torch.cuda.device_count() > 1:
        print("only one GPU is supported")
        exit()
        dist.init_process_group(backend="nccl", init_method="env://", world_size=-1, rank=-1)
    else:
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = "61234"
        dist.init_process_group(backend="nccl", init_method="env://", world_size=1, rank=0)
    torch.cuda.set_device(dist.get_rank())
    func()


if __name__ == "__main__":
    run_on_one_process(lambda: extract(torch.nn.Linear(4, 4), [torch.zeros(4)], "/tmp"))

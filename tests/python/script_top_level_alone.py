"""A dataset module that waits in a barrier in one of its methods (it runs
inside a distributed training job) and whose `__main__` dispatches offline
preprocessing (OpenPCDet's waymo_dataset.py: `create_waymo_infos`).  Run as
a script its top level joins no group: one process writes the info files.
Hard negatives; the twin tests/python/script_top_level_joins.py joins a
group at its top level and is reported.
"""
import argparse
import os
import pickle

import torch.distributed as dist


class PointDataset:
    def __init__(self, root):
        self.root = root
        self.infos = []

    def include_infos(self, split):
        if dist.is_initialized():
            dist.barrier()
        with open(os.path.join(self.root, f"infos_{split}.pkl"), "rb") as f:
            self.infos.extend(pickle.load(f))


def create_infos(root, save_path):
    infos = [{"sample": i} for i in range(10)]
    with open(os.path.join(save_path, "infos_train.pkl"), "wb") as f:
        pickle.dump(infos, f)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--func", default="create_infos")
    parser.add_argument("--root")
    args = parser.parse_args()
    if args.func == "create_infos":
        create_infos(args.root, args.root)

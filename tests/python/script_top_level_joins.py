"""The twin of tests/python/script_top_level_alone.py whose `__main__` joins
a group before it preprocesses: every rank writes the one info file.
"""
import argparse
import datetime
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
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: every rank runs 'pickle.dump' to the same path{{.*}} [ddp-unguarded-save]


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--func", default="create_infos")
    parser.add_argument("--root")
    args = parser.parse_args()
    dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
    if args.func == "create_infos":
        create_infos(args.root, args.root)

"""DPR's generate_dense_embeddings: one process per shard, each handed its
`shard_id`, writes `out_file + "_" + str(shard_id)`.  A name made from the
shard a process was handed is that process's own file, through a local name
too (hard negative).  The merged file every process writes is not.
"""
import datetime
import pickle
import sys

import torch


def setup(local_rank):
    if local_rank != -1:
        torch.cuda.set_device(local_rank)
        torch.distributed.init_process_group(backend="nccl", timeout=datetime.timedelta(minutes=30))


def main(cfg):
    setup(cfg.local_rank)
    data = [(cfg.shard_id, i) for i in range(10)]
    file = cfg.out_file + "_" + str(cfg.shard_id)
    with open(file, mode="wb") as f:
        pickle.dump(data, f)
    merged = cfg.out_file + "_all"
    with open(merged, mode="wb") as f:
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: every rank runs 'pickle.dump' to the same path{{.*}} [ddp-unguarded-save]
        pickle.dump(data, f)


if __name__ == "__main__":
    main(sys.argv[1])

"""A path made with a rank by its name (`'{}/{}.pkl'.format(tmp, self.rank)`,
Megatron's realm index) is one file per rank, however the rank got there.
"""
import os
import pickle

import torch
import torch.distributed as dist


class BlockData:
    def __init__(self, shard_id, temp_dir):
        self.rank = shard_id
        self.temp_dir = temp_dir
        self.embed_data = {}

    def save_shard(self):
        # Hard negative: this rank's shard.
        with open("{}/{}.pkl".format(self.temp_dir, self.rank), "wb") as writer:
            pickle.dump(self.embed_data, writer)
        dist.barrier()

    def save_merged(self):
        with open("{}/merged.pkl".format(self.temp_dir), "wb") as writer:
            pickle.dump(self.embed_data, writer)
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: every rank runs 'pickle.dump' to the same path{{.*}} [ddp-unguarded-save]
        dist.barrier()

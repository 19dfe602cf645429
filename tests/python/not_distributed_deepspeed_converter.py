"""An offline DeepSpeed-to-Hugging-Face weight converter (CogVideo's
tools/convert_weight_deepspeed2hf.py, DeepSpeed's zero_to_fp32): it imports
DeepSpeed's checkpoint constants and its logger, and runs in one process with
no process group.  Its shard writes race with nothing: no finding.
"""
import os

import torch
from deepspeed.utils import logger
from deepspeed.checkpoint.constants import OPTIMIZER_STATE_DICT, PARAM_SHAPES


def save_shards(state_dict, shards, output_dir):
    for shard_file, names in shards.items():
        shard = {n: state_dict[n] for n in names}
        torch.save(shard, os.path.join(output_dir, shard_file))
        logger.info(f"saved {shard_file}")


def main(path, output_dir):
    state = torch.load(path, map_location="cpu")
    sd = state[OPTIMIZER_STATE_DICT]
    shapes = state[PARAM_SHAPES]
    save_shards(sd, {"pytorch_model.bin": list(shapes)}, output_dir)
    torch.save(shapes, os.path.join(output_dir, "shapes.pt"))


if __name__ == "__main__":
    main("mp_rank_00_model_states.pt", "out")

"""Hard negative: an offline merger of a sharded checkpoint (EasyR1's
scripts/model_merger.py).  It reads DTensor's types to unshard, starts no
process group and reads no rank: the one process is the only writer."""
import argparse

import torch
from torch.distributed._tensor import DTensor, Shard
from transformers import AutoConfig, AutoModelForCausalLM

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_dir", required=True)
    args = parser.parse_args()
    sd = torch.load(f"{args.local_dir}/model_world_size_2_rank_0.pt")
    sd = {k: (v.to_local() if isinstance(v, DTensor) else v) for k, v in sd.items()}
    placements = [p for p in sd.values() if isinstance(p, Shard)]
    model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(args.local_dir))
    model.save_pretrained(args.local_dir + "/hf", state_dict=sd)
    torch.save(sd, args.local_dir + "/merged.pt")

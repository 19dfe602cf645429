"""Hard negatives: an offline converter of a distributed checkpoint
(LLaMA-Factory's scripts/dcp2hf.py).  torch.distributed.checkpoint loads
without a process group; nothing here starts one or reads a rank, so the one
process is the only writer."""
import fire
import torch.distributed.checkpoint as dcp
import transformers
from transformers import AutoConfig


def convert(dcp_path: str, hf_path: str, config_path: str) -> None:
    config = AutoConfig.from_pretrained(config_path)
    model = transformers.AutoModelForCausalLM.from_config(config)
    state_dict = model.state_dict()
    dcp.load(state_dict, checkpoint_id=dcp_path)
    model.load_state_dict(state_dict)
    model.save_pretrained(hf_path)


if __name__ == "__main__":
    fire.Fire({"convert": convert})

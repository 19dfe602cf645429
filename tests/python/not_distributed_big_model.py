"""A quantiser that uses Accelerate's big-model helpers (hooks, offloading,
device maps; AutoGPTQ's modeling/_base.py, vendored by OLMo): one process,
so a save on "every rank" is one save.  No finding expected.
"""
import os

import accelerate
import torch
from accelerate.hooks import remove_hook_from_module


class Quantized:
    def __init__(self, model):
        self.model = model

    def save_quantized(self, save_dir):
        remove_hook_from_module(self.model, recurse=True)
        torch.save(self.model.state_dict(), os.path.join(save_dir, "gptq_model.bin"))

    def from_pretrained(self, path):
        with accelerate.init_empty_weights():
            return torch.load(path)

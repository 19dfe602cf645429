"""Hard negatives: accelerate's prepare hands a dict (a Munch) of modules back
as it was (StyleTTS2's train_finetune_accelerate.py, whose model is a Munch of
DataParallel modules).  Nothing is wrapped in DDP, so accelerator.backward
all-reduces nothing: a step skipped on one rank, or a backward under a
rank-local test, leaves no rank waiting.
"""
import random

import torch
import torch.nn as nn
from accelerate import Accelerator

accelerator = Accelerator()


def main(loader):
    model = {"enc": nn.Linear(4, 4), "dec": nn.Linear(4, 4)}
    for key in model:
        model[key] = nn.DataParallel(model[key])
    optimizer = torch.optim.Adam([p for m in model.values() for p in m.parameters()])
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for batch in loader:
        try:
            h = model["enc"](batch)
        except RuntimeError:
            continue
        accelerator.backward(model["dec"](h).sum())
        out = h if random.random() < 0.5 else None
        if out is not None:
            accelerator.backward(out.sum())
        optimizer.step()

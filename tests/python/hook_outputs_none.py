"""DeBERTa's `post_loss_fn(outputs)`: a trainer hands its hook the step's
outputs.  Whether it hands any (`if outputs is None: return`) is the
trainer's code, alike on every rank; the values are the rank's, the
presence is not (hard negative).
"""
import datetime

import torch
import torch.distributed as dist


class Trainer:
    def __init__(self, model, hook):
        self.model = model
        self.post_loss_fn = hook

    def step(self, batches, grads):
        forward_outputs = []
        for b in batches:
            forward_outputs.append(self.model(b))
        self.post_loss_fn(forward_outputs)


def post_loss_fn(outputs, grads=None):
    if outputs is None:
        return None
    dist.all_reduce(grads)


def main(model, batches, grads):
    dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
    t = Trainer(model, post_loss_fn)
    t.step(batches, grads)
    post_loss_fn([model(b) for b in batches], grads)

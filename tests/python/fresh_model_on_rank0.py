"""The old Hugging Face examples' shape (Oscar's run_vqa.py): `train()` wraps
its own `model` in DDP and evaluates it on rank 0 during training; after
training `main` loads each checkpoint afresh and evaluates it on rank 0.  The
name is the same, the object is not: the loaded model is a plain module, and
its forward runs no collective.
"""
import datetime

import torch
import torch.distributed as dist
from transformers import BertForSequenceClassification


def evaluate(args, model):
    with torch.no_grad():
        for batch in range(3):
            model(batch)


def train(args, model):
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank])
    for step in range(10):
        loss = model(step)
        loss.backward()
        if args.local_rank in [-1, 0] and step % 5 == 0:
            evaluate(args, model)
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: call to 'evaluate', which runs collective `forward of the DistributedDataParallel model 'model' (buffer broadcast) under no_grad`, runs only on ranks where {{.*}} [ddp-divergent-collective]


def main(args):
    dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
    model = BertForSequenceClassification.from_pretrained("bert-base-uncased")
    train(args, model)
    if args.local_rank in [-1, 0]:  # hard negative: a fresh, unwrapped model
        for checkpoint in ["out/checkpoint-1", "out/checkpoint-2"]:
            model = BertForSequenceClassification.from_pretrained(checkpoint)
            model.to(args.device)
            evaluate(args, model)

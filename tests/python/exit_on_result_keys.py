"""Which keys a loss, output or batch dict has is the code's, alike on every rank.

ml-cvnets exits when its loss function's dict lacks "total_loss": every rank
runs the same loss function, so every rank takes that exit or none does.  A
batch's keys come from the collator and the config every rank shares (trl's
`"attention_mask" in inputs`, open-instruct's `"cu_seq_lens_q" in batch`);
a loader that mixes key sets across ranks is the accepted miss.  Whether a
value is there at all (a forward()'s optional argument, a `.get("k")` of a
batch, a field of a model's output) is decided alike too.
"""
import sys

import torch
import torch.distributed as dist


def train(model, criteria, loader, opt):
    model = torch.nn.parallel.DistributedDataParallel(model)
    for samples, targets in loader:
        pred = model(samples)
        loss_dict = criteria(pred, targets)
        if "total_loss" not in loss_dict.keys():
            sys.exit("total_loss key is required")
        loss = loss_dict["total_loss"]
        loss.backward()
        opt.step()


def train_mixed_tasks(model, loader, opt):
    model = torch.nn.parallel.DistributedDataParallel(model)
    for samples in loader:
        if "image" not in samples:  # hard negative: the collator's keys
            sys.exit("a batch without images")
        loss = model(samples["image"]).sum()
        loss.backward()
        opt.step()


def step_with_optional_labels(model, inputs, accelerator):
    # Hard negatives (trl's trainers): a batch key read with .get() and a
    # field of the model's output are there on every rank or on none.
    outputs = model(**inputs)
    accelerator.backward(outputs.loss)
    labels = inputs.get("labels")
    if labels is not None:
        accelerator.gather((labels != -100).sum())
    if outputs.token_accuracy is not None:
        accelerator.gather(outputs.token_accuracy)
    # The same field read with a default (peft's AdaLoRA wrapper).
    if getattr(outputs, "aux_loss", None) is not None:
        accelerator.gather(outputs.aux_loss)


class Head(torch.nn.Module):
    def forward(self, hidden, labels=None):
        # Hard negative (InternVL): the caller passes labels on every rank or on none.
        if labels is not None:
            dist.all_reduce(hidden)
        return hidden


def skip_exhausted(model, loader, opt):
    # The rank's own batch: next(it, None) runs out on the rank with fewer batches.
    model = torch.nn.parallel.DistributedDataParallel(model)
    it = iter(loader)
    while True:
        batch = next(it, None)
        if batch is None:
            break
        model(batch).sum().backward()  # CHECK-MESSAGES: :[[@LINE]]:9: error: {{.*}} [ddp-divergent-collective]
        opt.step()


def reduce_each_loss(model, batch):
    # TorchMultimodal's FLAVA: which losses the output holds (None for the
    # tasks this batch kind lacks) is the model's, and the batch kind is
    # rank 0's broadcast choice (hard negative).
    losses = model(batch).losses
    total = 0
    for key in losses:
        if losses[key] is not None:
            total += losses[key]
            reduced = losses[key].detach()
            dist.reduce(reduced, dst=0)
    return total


def exit_on_gathered_nan(model, loader, opt):
    # InternVideo2's engines: every rank all_gathers every rank's loss and
    # tests the gathered list, so all of them exit together (hard negative).
    for videos in loader:
        loss = model(videos).mean()
        loss_list = [torch.zeros_like(loss) for _ in range(dist.get_world_size())]
        dist.all_gather(loss_list, loss)
        loss_list = torch.tensor(loss_list)
        if torch.isnan(loss_list).any() or torch.isinf(loss_list).any():
            sys.exit(1)
        loss.backward()
        opt.step()


def run_gathered(net, loader, opt, epochs):
    model = torch.nn.parallel.DistributedDataParallel(net)
    for epoch in range(epochs):
        exit_on_gathered_nan(model, loader, opt)

"""A project's own training helpers (issue 16): a function that wraps the
model in DDP (yolov5's `smart_DDP`), a progress bar kept in a variable
(`pbar = enumerate(loader)`, then `pbar = TQDM(pbar)` on rank 0), and a
`reduce_dict` that all-reduces a dict of losses and returns it (DETR's
util.misc), with a one-process early return.
"""
import datetime
import math
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

RANK = int(os.getenv("RANK", "-1"))
LOCAL_RANK = int(os.getenv("LOCAL_RANK", "-1"))


def smart_DDP(model):
    if torch.__version__ >= "1.11.0":
        return DDP(model, device_ids=[LOCAL_RANK], output_device=LOCAL_RANK, static_graph=True)
    return DDP(model, device_ids=[LOCAL_RANK], output_device=LOCAL_RANK)


class TQDM:
    def __init__(self, iterable, total=None):
        self.iterable = iterable

    def __iter__(self):
        return iter(self.iterable)


def reduce_dict(input_dict, average=True):
    world_size = dist.get_world_size()
    if world_size < 2:
        return input_dict
    with torch.no_grad():
        names = sorted(input_dict.keys())
        values = torch.stack([input_dict[k] for k in names], dim=0)
        dist.all_reduce(values)
        if average:
            values /= world_size
        reduced_dict = {k: v for k, v in zip(names, values)}
    return reduced_dict


def train(model, train_loader, optimizer, epochs):
    model = smart_DDP(model)
    for epoch in range(epochs):
        pbar = enumerate(train_loader)
        if RANK in {-1, 0}:
            pbar = TQDM(pbar, total=len(train_loader))
        # Every rank iterates the loader's batches, bar or not.
        for i, (imgs, targets) in pbar:
            loss = model(imgs).sub(targets).pow(2).mean()
            loss.backward()
            optimizer.step()
        if RANK in {-1, 0}:  # CHECK-MESSAGES: :[[@LINE]]:9: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
            torch.save(model.module.state_dict(), "last.pt")


def train_one_epoch(model, criterion, loader, optimizer):
    for samples, targets in loader:
        loss_dict = criterion(model(samples), targets)
        losses = sum(loss_dict.values())
        # The reduced dict is the same on every rank: so is the stop.
        loss_dict_reduced = reduce_dict(loss_dict)
        loss_value = sum(loss_dict_reduced.values()).item()
        if not math.isfinite(loss_value):
            sys.exit(1)
        losses.backward()
        optimizer.step()
        dist.all_reduce(losses)


def train_one_epoch_hazard(model, criterion, loader, optimizer):
    for samples, targets in loader:
        loss_dict = criterion(model(samples), targets)
        losses = sum(loss_dict.values())
        # This rank's own loss: one rank may stop alone.
        loss_value = losses.item()
        if not math.isfinite(loss_value):
            sys.exit(1)  # CHECK-MESSAGES: :[[@LINE+1]]:9: error: collective 'backward (DDP gradient allreduce)' is skipped by ranks where 'math.isfinite(loss_value)' does not hold{{.*}} [ddp-divergent-collective]
        losses.backward()
        optimizer.step()
        dist.all_reduce(losses)


class DistributedDataLoader:
    def __init__(self, path, B, T, rank, world):
        self.path = path

    def next_batch(self):
        return torch.load(self.path)


def gpt2_main(model, args):
    """llm.c's train_gpt2.py: a reference forward on rank 0 before the DDP
    wrap, and a validation loader made with the rank when a file is given."""
    ddp_rank = int(os.environ["RANK"])
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    master_process = ddp_rank == 0
    train_loader = DistributedDataLoader(args.input_bin, 4, 64, ddp_rank, 8)
    val_loader = None
    if args.input_val_bin:
        val_loader = DistributedDataLoader(args.input_val_bin, 4, 64, ddp_rank, 8)
    if master_process and args.write_tensors:
        # The plain model: DDP wraps it below.
        x, y = train_loader.next_batch()
        logits, loss = model(x, y)
        loss.backward()
    model = DDP(model, device_ids=[ddp_rank])
    for step in range(args.num_iterations):
        # Made or not on every rank alike: not a rank decision.
        if val_loader is not None and step % 100 == 0:
            x, y = val_loader.next_batch()
            _, val_loss = model(x, y)
        x, y = train_loader.next_batch()
        _, loss = model(x, y)
        loss.backward()


class NativeScaler:
    # A switch with a boolean default is the caller's setting, not a gradient
    # (LLaMA2-Accessory's `update_grad`): its test does not split the ranks.
    def __call__(self, loss, optimizer, model, update_grad=True):
        if update_grad:
            loss.backward()
            optimizer.step()
        else:
            with model.no_sync():
                loss.backward()


def accumulate(model, loader, optimizer, accum_iter):
    model = torch.nn.parallel.DistributedDataParallel(model)
    scaler = NativeScaler()
    for i, batch in enumerate(loader):
        scaler(model(batch).sum(), optimizer, model, update_grad=(i + 1) % accum_iter == 0)


def step_on_grad(model, optimizer, local_grad):
    model = torch.nn.parallel.DistributedDataParallel(model)
    # No default: a gradient handed in is this rank's.
    if local_grad:
        model(torch.ones(1)).sum().backward()  # CHECK-MESSAGES: :[[@LINE]]:9: error: collective {{.*}} runs only on ranks where 'local_grad' holds (a rank-local value){{.*}} [ddp-divergent-collective]


def all_reduce_forward(tensor, op=dist.ReduceOp.SUM):
    # jukebox's dist_adapter: the project's own name for the collective
    return dist.all_reduce(tensor, op)


def allreduce_scalar(x, op=dist.ReduceOp.SUM):
    t = torch.tensor(x).float()
    all_reduce_forward(t, op=op)
    return t.item()


def clamp_scalar(x):
    t = torch.tensor(x).float()
    torch.clamp_(t, 0, 1)
    return t.item()


def skip_overflowing_steps(model, loader, grads):
    for batch in loader:
        loss = model(batch).sum()
        # hard negative: every rank takes the maximum through the forwarding helper
        if allreduce_scalar(int(not torch.isfinite(loss).item()), op=dist.ReduceOp.MAX) > 0:
            continue
        dist.all_reduce(grads)
        # this rank's own flag, clamped, still differs across ranks
        if clamp_scalar(int(not torch.isfinite(loss).item())) > 0:
            continue  # CHECK-MESSAGES: :[[@LINE+1]]:9: error: collective 'all_reduce' is never reached by ranks where{{.*}} [ddp-divergent-collective]
        dist.all_reduce(grads)



def reduce_tensor(tensor, num_gpus):
    # FastPitch's helper: the sum over ranks, divided by the world's size
    rt = tensor.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    return rt.true_divide(num_gpus)


def reduce_by(tensor, count):
    rt = tensor.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    return rt.true_divide(count)


def raise_on_reduced_nan(model, loader, optimizer, world_size):
    model = DDP(model)
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        # hard negative: every rank tests the same reduced value
        reduced_loss = reduce_tensor(loss.data, world_size).item()
        if math.isnan(reduced_loss):
            raise RuntimeError("loss is NaN")
        optimizer.step()


def raise_on_own_mean(model, loader, optimizer, local_count):
    model = DDP(model)
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)  # CHECK-MESSAGES: :[[@LINE]]:45: error: collective `forward of the DistributedDataParallel model 'model' (buffer broadcast)` is skipped by ranks where 'math.isnan(mean_loss)' holds{{.*}} [ddp-divergent-collective]
        loss.backward()
        # divided by this rank's own count: not the same on every rank
        mean_loss = reduce_by(loss.data, local_count).item()
        if math.isnan(mean_loss):
            raise RuntimeError("loss is NaN")
        optimizer.step()


def all_reduce_mean(x):
    # MAE's util/misc.py: the input itself only in the one-process run
    world_size = dist.get_world_size()
    if world_size > 1:
        x_reduce = torch.tensor(x).cuda()
        dist.all_reduce(x_reduce)
        x_reduce /= world_size
        return x_reduce.item()
    else:
        return x


def all_reduce_mean_or_own(x, several):
    # the input where a rank-local flag says so: not agreed
    if several:
        x_reduce = torch.tensor(x).cuda()
        dist.all_reduce(x_reduce)
        return x_reduce.item()
    else:
        return x


def exit_on_reduced_mean(model, loader, optimizer):
    # hard negative: Adan's MAE scripts test the mean every rank computes
    model = DDP(model)
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        loss_value_reduce = all_reduce_mean(loss.item())
        if not math.isfinite(loss_value_reduce):
            sys.exit(1)
        optimizer.step()


def exit_on_maybe_reduced(model, loader, optimizer, several):
    model = DDP(model)
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)  # CHECK-MESSAGES: :[[@LINE]]:45: error: {{.*}} [ddp-divergent-collective]
        loss.backward()
        value = all_reduce_mean_or_own(loss.item(), several)
        if not math.isfinite(value):
            sys.exit(1)
        optimizer.step()

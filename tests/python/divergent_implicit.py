"""ddp-divergent-collective on implicit collectives.

The forward of a DistributedDataParallel model (buffer broadcast) and
loss.backward() through it (gradient allreduce), FSDP's full state_dict(),
ZeroRedundancyOptimizer.consolidate_state_dict() and torchmetrics'
Metric.compute() are collectives although no torch.distributed call is
written.  Each true positive has one rank-dependent decision.
"""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torchmetrics
from torch.distributed.fsdp import FullStateDictConfig, StateDictType
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.optim import ZeroRedundancyOptimizer
from torch.nn.parallel import DistributedDataParallel as DDP


def build(local_rank):
    model = nn.Sequential(nn.Linear(32, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 10))
    return model.to(local_rank)


# ---- true positives ---------------------------------------------------------


def validate_with_ddp_model_on_rank0(local_rank, val_x, val_y):
    ddp_model = DDP(build(local_rank), device_ids=[local_rank])
    if dist.get_rank() == 0:
        with torch.no_grad():
            # The DDP forward broadcasts buffers (BatchNorm stats) from rank 0.
            # CHECK-MESSAGES: :[[@LINE+1]]:19: error: {{.*}} [ddp-divergent-collective]
            out = ddp_model(val_x)
            print((out.argmax(-1) == val_y).float().mean().item())


def skip_backward_on_nan(local_rank, batches, optimizer):
    ddp_model = DDP(build(local_rank), device_ids=[local_rank])
    criterion = nn.CrossEntropyLoss()
    for x, y in batches:
        optimizer.zero_grad(set_to_none=True)
        loss = criterion(ddp_model(x), y)
        if torch.isnan(loss):
            continue  # this rank's batch only: the others enter the allreduce
        loss.backward()  # CHECK-MESSAGES: :[[@LINE]]:9: error: {{.*}} [ddp-divergent-collective]
        optimizer.step()


def skip_scaled_backward_on_nan(local_rank, batches, optimizer, scaler):
    # A scaler's backward with create_graph= (MAE-family NativeScaler) still
    # runs DDP's gradient allreduce.
    ddp_model = DDP(build(local_rank), device_ids=[local_rank])
    for x, y in batches:
        loss = ddp_model(x).sub(y).pow(2).mean()
        if torch.isnan(loss):
            continue
        scaler.scale(loss).backward(create_graph=False)  # CHECK-MESSAGES: :[[@LINE]]:9: error: {{.*}} [ddp-divergent-collective]
        scaler.step(optimizer)


def pipeline_stage_backward(local_rank, acts, grads):
    # hard negative: a gradient handed in (a pipeline stage's backward of its
    # output) is not a DDP loss's backward
    for a, g in zip(acts, grads):
        if torch.isnan(g).any():
            continue
        a.backward(g)


def uneven_manual_split(local_rank, samples, optimizer):
    ddp_model = DDP(build(local_rank), device_ids=[local_rank])
    rank, world = dist.get_rank(), dist.get_world_size()
    mine = samples[rank::world]  # no DistributedSampler: uneven per-rank counts
    for x, y in mine:
        optimizer.zero_grad()
        # CHECK-MESSAGES: :[[@LINE+1]]:16: error: {{.*}} [ddp-divergent-collective]
        loss = ddp_model(x).sub(y).pow(2).mean()
        loss.backward()
        optimizer.step()


def fsdp_full_state_dict_on_rank0(fsdp_model, path):
    cfg = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
    if dist.get_rank() == 0:
        with FSDP.state_dict_type(fsdp_model, StateDictType.FULL_STATE_DICT, cfg):
            # All-gathers the shards: every rank must call it.
            # CHECK-MESSAGES: :[[@LINE+1]]:21: error: {{.*}} [ddp-divergent-collective]
            state = fsdp_model.state_dict()
        torch.save(state, path)


def zero_consolidate_on_rank0(model, path):
    optimizer = ZeroRedundancyOptimizer(
        model.parameters(), optimizer_class=torch.optim.AdamW, lr=1e-4)
    if dist.get_rank() == 0:
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: {{.*}} [ddp-divergent-collective]
        optimizer.consolidate_state_dict(to=0)
        torch.save(optimizer.state_dict(), path)


def metric_compute_on_rank0(model, batches, device):
    metric = torchmetrics.classification.MulticlassAccuracy(num_classes=10).to(device)
    for x, y in batches:
        metric.update(model(x), y)
    if dist.get_rank() == 0:
        # compute() syncs the metric state across ranks.
        acc = metric.compute()  # CHECK-MESSAGES: :[[@LINE]]:15: error: {{.*}} [ddp-divergent-collective]
        print(f"accuracy {acc:.4f}")


def metric_compute_on_local_loss(model, batches, device):
    auroc = torchmetrics.AUROC(task="binary").to(device)
    for x, y in batches:
        logits = model(x)
        auroc.update(logits.sigmoid(), y)
        if logits.abs().max().item() > 1e4:
            # CHECK-MESSAGES: :[[@LINE+1]]:19: error: {{.*}} [ddp-divergent-collective]
            print(auroc.compute())


# ---- hard negatives -----------------------------------------------------------


def validate_unwrapped_module_on_rank0(local_rank, val_x):
    ddp_model = DDP(build(local_rank), device_ids=[local_rank])
    if dist.get_rank() == 0:
        with torch.no_grad():
            out = ddp_model.module(val_x)  # the inner module: no collective
            print(out.shape)


def grad_accumulation_no_sync(local_rank, batches, optimizer, accum_steps):
    ddp_model = DDP(build(local_rank), device_ids=[local_rank])
    criterion = nn.CrossEntropyLoss()
    for step, (x, y) in enumerate(batches):
        if (step + 1) % accum_steps != 0:
            with ddp_model.no_sync():
                criterion(ddp_model(x), y).backward()
        else:
            criterion(ddp_model(x), y).backward()
            optimizer.step()
            optimizer.zero_grad()


def evaluate_everywhere_print_on_main(local_rank, val_batches):
    ddp_model = DDP(build(local_rank), device_ids=[local_rank])
    total = torch.zeros(1, device=local_rank)
    with torch.no_grad():
        for x, _ in val_batches:
            total += ddp_model(x).sum()
    dist.all_reduce(total)
    if dist.get_rank() == 0:
        print(f"sum of logits {total.item():.2f}")


def fsdp_rank0_only_save(fsdp_model, path):
    # The FSDP docs' pattern: every rank gathers, only rank 0 writes; nothing follows.
    cfg = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
    with FSDP.state_dict_type(fsdp_model, StateDictType.FULL_STATE_DICT, cfg):
        cpu_state = fsdp_model.state_dict()
    if dist.get_rank() == 0:
        torch.save(cpu_state, path)


def zero_consolidate_everywhere(model, path):
    optimizer = ZeroRedundancyOptimizer(
        model.parameters(), optimizer_class=torch.optim.SGD, lr=0.1)
    optimizer.consolidate_state_dict(to=0)
    if dist.get_rank() == 0:
        torch.save({"optimizer": optimizer.state_dict()}, path)


def metric_compute_everywhere(model, batches, device, epoch):
    metric = torchmetrics.classification.MulticlassF1Score(num_classes=10).to(device)
    for x, y in batches:
        metric.update(model(x), y)
    f1 = metric.compute()
    if dist.get_rank() == 0:
        print(f"epoch {epoch} f1 {f1.item():.4f}")
    metric.reset()


def plain_module_on_rank0(val_x):
    # Not wrapped: a plain module's forward communicates with nobody.
    probe = nn.Linear(32, 2)
    if int(os.environ.get("RANK", "0")) == 0:
        print(probe(val_x).mean().item())

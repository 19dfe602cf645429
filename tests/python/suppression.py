"""Suppression comments: `# noqa: ddp-<rule>` or `# NOLINT(ddp-<rule>)` on the
flagged line silences that rule there, and only that rule."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader


def setup():
    dist.init_process_group(backend="gloo")  # noqa: ddp-init-timeout
    dist.new_group(ranks=[0, 1], timeout=timedelta(minutes=1))


def rank0_reduce(t):
    if dist.get_rank() == 0:
        dist.all_reduce(t)  # noqa: ddp-divergent-collective
    if dist.get_rank() == 1:
        dist.broadcast(t, src=1)  # NOLINT(ddp-divergent-collective)
    return t


def save_all(model):
    torch.save(model.state_dict(), "model.pt")  # NOLINT(ddp-unguarded-save)
    dist.barrier()


def save_rank0(model, t):
    dist.all_reduce(t)
    if dist.get_rank() == 0:  # noqa: ddp-rank0-io-barrier
        torch.save(model.state_dict(), "rank0.pt")
    dist.all_reduce(t)


def workers(ds):
    return DataLoader(ds, num_workers=2)  # noqa: ddp-dataloader-options


def wrong_rule_does_not_suppress(model):
    # CHECK-MESSAGES: :[[@LINE+1]]:5: error: same path [ddp-unguarded-save]
    torch.save(model.state_dict(), "other.pt")  # noqa: ddp-init-timeout
    dist.barrier()


def two_rules_one_line(ds, epochs):
    for _ in range(epochs):
        loader = DataLoader(ds, num_workers=4)  # noqa: ddp-dataloader-recreated, ddp-dataloader-options
        for batch in loader:
            print(len(batch))


def one_of_two_rules(ds, epochs):
    for _ in range(epochs):
        # CHECK-MESSAGES: :[[@LINE+1]]:18: warning: persistent_workers [ddp-dataloader-options]
        loader = DataLoader(ds, num_workers=4)  # NOLINT(ddp-dataloader-recreated)
        for batch in loader:
            print(len(batch))

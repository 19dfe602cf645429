"""A singledispatch base that raises only answers types nobody registered.

lerobot's eval environments are closed in a context manager's `finally` by
`close_envs(envs)`, a `functools.singledispatch` function whose base raises
NotImplementedError for unknown types; the dict overload closes them.  Rank
0's evaluation block does not throw there, and the barrier every rank
reaches after it is no divergence.  A plain helper that raises is a throw on
the ranks that call it.
"""
from contextlib import contextmanager
from functools import singledispatch

import torch.distributed as dist


@singledispatch
def close_envs(obj):
    raise NotImplementedError(type(obj).__name__)


@close_envs.register
def _(envs: dict):
    for v in envs.values():
        v.close()


def close_strict(obj):
    raise NotImplementedError(type(obj).__name__)


@contextmanager
def make_eval_envs(cfg):
    envs = {name: cfg.make(name) for name in cfg.names}
    try:
        yield envs
    finally:
        close_envs(envs)


def train(cfg, policy):
    for step in range(cfg.steps):
        policy(step).backward()
        if step % cfg.eval_freq == 0:
            if dist.get_rank() == 0:
                with make_eval_envs(cfg) as envs:
                    policy.evaluate(envs)
            dist.barrier()


def train_strict(cfg, policy):
    for step in range(cfg.steps):
        if step % cfg.eval_freq == 0:
            if dist.get_rank() == 0:
                close_strict(policy)
            dist.barrier()  # CHECK-MESSAGES: :[[@LINE]]:13: error: barrier is skipped by ranks where 'dist.get_rank() == 0' holds: they throw{{.*}} [ddp-divergent-collective]

"""Constructing DistributedDataParallel runs collectives.

DistributedDataParallel(module) verifies the parameter shapes across ranks
(an allgather of their metadata, `_verify_params_across_processes`) and then
broadcasts rank 0's parameters and buffers to every rank (`_sync_module_states`).
Wrapping a model in DDP on some ranks only (e.g. building an evaluation copy
under `if rank == 0:`) blocks there.  Broken: only rank 0 constructs DDP;
fixed: both do.
"""
import sys

from proof_harness import import_torch, run_proof


# Imported before the ranks fork, so that they do not import it again (a clear
# failure, not an ImportError, when torch is missing).
torch = import_torch()
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402


def setup(rank):
    torch.manual_seed(rank)
    return torch.nn.Linear(4, 4)


def call(model, rank):
    DDP(model)


if __name__ == "__main__":
    sys.exit(run_proof("implicit_ddp_init", setup, call, caller=0))

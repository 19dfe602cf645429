"""ZeroRedundancyOptimizer.step() broadcasts the updated parameters.

Each rank updates only the parameters of its own shard, then step() broadcasts
every shard's parameters from its owner (`_sync_params`) so that all ranks hold
the same model.  A rank that skips step() (a local NaN/inf check, a
rank-dependent accumulation counter) leaves the others blocked in it.
Broken: only rank 0 steps; fixed: both do.
"""
import sys

from proof_harness import import_torch, run_proof


# Imported before the ranks fork, so that they do not import it again (a clear
# failure, not an ImportError, when torch is missing).
torch = import_torch()
from torch.distributed.optim import ZeroRedundancyOptimizer  # noqa: E402


def setup(rank):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 4))
    opt = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.SGD, lr=0.01)
    model(torch.randn(8, 4)).sum().backward()
    return opt


def call(opt, rank):
    opt.step()


if __name__ == "__main__":
    sys.exit(run_proof("implicit_zero_step", setup, call, caller=0))

"""ZeroRedundancyOptimizer.consolidate_state_dict() broadcasts every shard.

Each rank owns one shard of the optimizer state.  consolidate_state_dict(to=0)
broadcasts each rank's shard (as a pickled object: a length, then the bytes)
so that rank `to` can build the full state dict; every rank must call it.
The usual bug is calling it only where the checkpoint is written:
`if rank == 0: opt.consolidate_state_dict(); torch.save(opt.state_dict(), ...)`.
Broken: only rank 0 calls it; fixed: both do.
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
    opt = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.Adam, lr=0.01)
    model(torch.randn(8, 4)).sum().backward()
    opt.step()      # every rank: Adam state now exists on each shard
    return opt


def call(opt, rank):
    opt.consolidate_state_dict(to=0)


if __name__ == "__main__":
    sys.exit(run_proof("implicit_zero_consolidate", setup, call, caller=0))

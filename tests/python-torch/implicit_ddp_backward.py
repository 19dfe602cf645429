"""loss.backward() through a DistributedDataParallel model allreduces the gradients.

DDP's reducer hooks every parameter's gradient; when a bucket of gradients is
ready during backward it launches an allreduce, and the end of backward waits
for all of them.  A rank that skips backward (`continue` on a bad batch, a
NaN loss, a rank-dependent loss) leaves the other ranks blocked inside
loss.backward().  Broken: both ranks run the forward, only rank 0 runs
backward; fixed: both run backward.
"""
import sys

from proof_harness import import_torch, run_proof


# Imported before the ranks fork, so that they do not import it again (a clear
# failure, not an ImportError, when torch is missing).
torch = import_torch()
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402


def setup(rank):
    torch.manual_seed(0)
    ddp = DDP(torch.nn.Linear(4, 4))
    loss = ddp(torch.randn(8, 4)).pow(2).mean()   # every rank runs the forward
    # Keep the DDP module alive: its reducer owns the gradient hooks (a DDP
    # object that is garbage-collected before backward allreduces nothing).
    return ddp, loss


def call(state, rank):
    ddp, loss = state
    loss.backward()


if __name__ == "__main__":
    sys.exit(run_proof("implicit_ddp_backward", setup, call, caller=0))

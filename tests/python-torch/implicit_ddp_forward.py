"""DistributedDataParallel.forward broadcasts the module's buffers.

A model with buffers (BatchNorm's running stats) wrapped in DDP with
broadcast_buffers=True (the default) broadcasts every buffer from rank 0 at the
start of each forward that follows a forward with grad enabled (the first one
included).  An evaluation forward that only rank 0 runs (`if rank == 0:
evaluate(model)`) is therefore a collective under a rank condition.  The broken
variant shows rank 0, the broadcast's root, blocking in a forward that rank 1
skips (Gloo's send waits for the receiver); the fixed variant runs the forward
on both ranks.
"""
import sys

from proof_harness import import_torch, run_proof


# Imported before the ranks fork, so that they do not import it again (a clear
# failure, not an ImportError, when torch is missing).
torch = import_torch()
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402


def setup(rank):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4))
    ddp = DDP(model)          # broadcast_buffers=True is the default
    # One training step on every rank: require_forward_param_sync is now True.
    ddp(torch.randn(8, 4)).sum().backward()
    ddp.eval()
    return ddp


def call(ddp, rank):
    with torch.no_grad():
        ddp(torch.randn(8, 4))     # the user's evaluation forward


if __name__ == "__main__":
    sys.exit(run_proof("implicit_ddp_forward", setup, call, caller=0))

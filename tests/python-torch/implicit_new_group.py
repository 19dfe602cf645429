"""torch.distributed.new_group() must be called by every rank, members or not.

new_group(ranks) ends with a store-based barrier over the whole default group
(`_store_based_barrier`, torch/distributed/distributed_c10d.py), so a rank
that is not in `ranks` must still call it.  `if rank in ranks: g =
new_group(ranks)` blocks the members, for the new group's timeout (default 30
min).  Broken: only rank 0 (the only member) calls new_group([0]); fixed: both
ranks call it.  The proof passes the process-group timeout explicitly so the
blocked member fails after seconds.
"""
import datetime
import sys

from proof_harness import PG_TIMEOUT_S, import_torch, run_proof


# Imported before the ranks fork, so that they do not import it again (a clear
# failure, not an ImportError, when torch is missing).
torch = import_torch()
import torch.distributed as dist  # noqa: E402


def setup(rank):
    return None


def call(_, rank):
    dist.new_group(ranks=[0], timeout=datetime.timedelta(seconds=PG_TIMEOUT_S))


if __name__ == "__main__":
    sys.exit(run_proof("implicit_new_group", setup, call, caller=0))

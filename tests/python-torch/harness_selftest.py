"""The proof harness can fail: a broken variant whose call completes, and a
fixed variant that hangs, must each make run_proof() return 1.

  no-collective  DDP(broadcast_buffers=False): the forward communicates
                 nothing, so the rank that calls it alone returns -> FAIL.
  fixed-hangs    a call that is a collective on rank 0 only even when "both
                 ranks make the call" -> the fixed variant never completes -> FAIL.
(The positive control, the same DDP forward with broadcast_buffers=True,
is implicit_ddp_forward.py.)
"""
import contextlib
import io
import sys

from proof_harness import import_torch, run_proof


# Imported before the ranks fork, so that they do not import it again (a clear
# failure, not an ImportError, when torch is missing).
torch = import_torch()
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402
import torch.distributed as dist  # noqa: E402


def ddp_setup():
    def setup(rank):
        torch.manual_seed(0)
        ddp = DDP(torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4)),
                  broadcast_buffers=False)
        ddp(torch.randn(8, 4)).sum().backward()
        ddp.eval()
        return ddp
    return setup


def forward(ddp, rank):
    with torch.no_grad():
        ddp(torch.randn(8, 4))


def rank0_barrier(_, rank):
    if rank == 0:
        dist.barrier()


def main():
    cases = [
        ("no-collective", ddp_setup(), forward, 1, "the broken variant completed"),
        ("fixed-hangs", lambda rank: None, rank0_barrier, 1, "the fixed variant hung"),
    ]
    bad = 0
    for name, setup, call, want, what in cases:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            got = run_proof("selftest-" + name, setup, call, caller=0)
        ok = got == want
        bad += not ok
        print("%s %s: run_proof returned %d, expected %d (%s)" % (
            "ok  " if ok else "FAIL", name, got, want, what))
        if not ok or want:
            print("    " + out.getvalue().rstrip().replace("\n", "\n    "))
    print("harness_selftest: %s" % ("ok" if not bad else "FAILED"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

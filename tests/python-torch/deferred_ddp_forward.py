"""A DDP forward under no_grad takes the place of the next forward's broadcast.

DistributedDataParallel.forward broadcasts the buffers while
require_forward_param_sync is set, and a forward without grad clears it, so
the next forward broadcasts nothing (torch/nn/parallel/distributed.py).  Rank
0's evaluation forward between training steps (nanoGPT's and llama2.c's
`if iter_num % eval_interval == 0 and master_process: estimate_loss()`) is
therefore rank 0's next training broadcast issued early: every rank issues the
same broadcasts, and the job completes.  ddplint relies on this
(Node::standsInFor); four jobs of two forked Gloo ranks check it, and the
one exception:

  deferred      rank 0 evaluates under no_grad before training steps 0, 2, 3
                and 4: the job must complete, and a last all_reduce must still sum
                what each rank sent.
  at-rebuild    rank 0 evaluates before step 1 only, the step in which DDP
                rebuilds its buckets (a broadcast of the bucket order, once per
                job): rank 0's early buffer broadcast meets that one; the job
                must not complete.  ddplint does not know the step number: a
                rank-0 evaluation whose interval lets it fall on step 1
                (`eval_interval = 1`) hangs without a finding.
  with-grad     the same evaluation without no_grad: the flag stays set and
                rank 0 broadcasts twice per step; the job must not complete.
  intervening   an all_reduce on every rank between rank 0's evaluation and the
                next training forward: rank 0's early broadcast meets the other
                rank's all_reduce; the job must not complete.

Run with /usr/bin/python3 (python3-torch).  Exit status 0 when all four end
as stated, 1 otherwise.
"""
import multiprocessing
import os
import sys
import tempfile
import time
import traceback
import datetime

from proof_harness import PG_TIMEOUT_S, WATCHDOG_S, _die_with_parent, import_torch

torch = import_torch()
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402


def _rank(rank, world, store, variant, results):
    _die_with_parent()
    try:
        import torch.distributed as dist
        dist.init_process_group("gloo", init_method="file://" + store, rank=rank,
                                world_size=world, timeout=datetime.timedelta(seconds=PG_TIMEOUT_S))
        torch.manual_seed(rank)  # different data per rank, as in training
        model = DDP(torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4)))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(5):
            # DDP rebuilds its buckets once, in the second training forward, with
            # a broadcast of its own: an early buffer broadcast then meets it.
            evaluate = step == 1 if variant == "at-rebuild" else step != 1
            if rank == 0 and evaluate:
                if variant == "with-grad":
                    model(torch.randn(8, 4))
                else:
                    with torch.no_grad():
                        model(torch.randn(8, 4))
            if variant == "intervening" and evaluate:
                dist.all_reduce(torch.ones(1))
            opt.zero_grad()
            model(torch.randn(8, 4)).sum().backward()
            opt.step()
        # The ranks' collectives still pair: an all_reduce sums what each sent.
        total = torch.tensor([float(rank + 1)])
        dist.all_reduce(total)
        right = total.item() == world * (world + 1) / 2
        results.put((rank, "completed" if right else "all_reduce gave %s" % total.item()))
    except BaseException as e:
        results.put((rank, "raised %s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")))
    finally:
        results.close()
        results.join_thread()
        os._exit(0)


def run(variant, world=2):
    ctx = multiprocessing.get_context("fork")
    results = ctx.Queue()
    fd, store = tempfile.mkstemp(prefix="ddplint-proof-", suffix=".store")
    os.close(fd)
    os.unlink(store)
    procs = [ctx.Process(target=_rank, args=(r, world, store, variant, results)) for r in range(world)]
    outcome = {}
    t0 = time.monotonic()
    try:
        for p in procs:
            p.start()
        while len(outcome) < world and time.monotonic() - t0 < WATCHDOG_S:
            try:
                r, what = results.get(timeout=0.1)
                outcome[r] = what
            except Exception:
                pass
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
        for p in procs:
            p.join(5)
        if os.path.exists(store):
            os.unlink(store)
    for r in range(world):
        outcome.setdefault(r, "blocked until the %.0f s watchdog" % WATCHDOG_S)
    return outcome, round(time.monotonic() - t0, 1)


def main():
    print("deferred_ddp_forward: torch %s, Gloo, 2 ranks, process-group timeout %.0f s"
          % (torch.__version__, PG_TIMEOUT_S))
    ok_all = True
    for variant, expect in (("deferred", True), ("at-rebuild", False), ("with-grad", False),
                            ("intervening", False)):
        outcome, seconds = run(variant)
        done = all(v == "completed" for v in outcome.values())
        ok = done == expect
        ok_all &= ok
        print("  %-11s (%s): %s in %.1f s: %s" % (
            variant, "completes" if expect else "does not complete", "PASS" if ok else "FAIL",
            seconds, "; ".join("rank %d %s" % (r, outcome[r]) for r in sorted(outcome))))
        sys.stdout.flush()
    print("deferred_ddp_forward: %s" % ("ok" if ok_all else "FAILED"))
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())

"""Two real Gloo ranks that prove an API runs a collective nobody wrote.

Each proof script (implicit_<name>.py) gives a `setup(rank)` that every rank
runs in both variants (building the model, the optimizer, ...), and a
`call(state, rank)`: the implicit call under test.  run_proof() runs two
variants of that job, each as two forked processes on a FileStore in a fresh
temporary file, with a short process-group timeout; the two jobs run at the
same time:

  broken  the caller rank makes the call; the other rank skips it and stays in
          the job (it waits, as a rank that went on to other work would).  The
          caller must block in the call: it raises a Gloo timeout after about
          the process-group timeout, or is still inside the call when the
          watchdog fires.  A call that returns on the caller fails the test:
          the API then ran no collective the other rank had to join.
  fixed   both ranks make the call; both must return within the watchdog.

The style is that of PyTorch's own c10d tests: real forked ranks (forked
after `import torch` and before any torch thread runs), a FileStore on a
temporary file, every child killed and reaped on any exit path (and killed by
the kernel if this process dies: PR_SET_PDEATHSIG), short timeouts.

Run with Debian's interpreter, /usr/bin/python3 (apt-get install python3-torch).
Exit status: 0 both outcomes as expected, 1 otherwise (a message says why).
"""

import ctypes
import datetime
import multiprocessing
import os
import queue
import signal
import sys
import tempfile
import time
import traceback

PG_TIMEOUT_S = 5.0          # process-group timeout of every rank
WATCHDOG_S = PG_TIMEOUT_S + 12.0   # per variant, from the fork; then every child is killed
MIN_BLOCK_S = PG_TIMEOUT_S * 0.8   # a broken caller must stay in the call at least this long


def import_torch():
    """Imports torch or exits 1 with a message that says how to get it (never a skip)."""
    try:
        import torch  # noqa: F401
        import torch.distributed as dist
    except ImportError as e:
        sys.stderr.write(
            "FAIL: torch is not importable by %s (%s).\n"
            "These proofs need Debian's real torch: `apt-get install python3-torch` "
            "(scripts/setup.sh installs it) and run them with /usr/bin/python3; the "
            "`python3` first on PATH may be another interpreter without torch.\n"
            % (sys.executable, e))
        sys.exit(1)
    if not dist.is_available() or not dist.is_gloo_available():
        sys.stderr.write("FAIL: torch %s has no torch.distributed with Gloo\n" % torch.__version__)
        sys.exit(1)
    return torch


def _die_with_parent():
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:
        pass


def _child(rank, world, store_path, variant, caller, setup, call, results, release):
    _die_with_parent()
    t_start = time.monotonic()

    def report(event, **kw):
        kw.update(rank=rank, event=event, t=round(time.monotonic() - t_start, 3))
        results.put(kw)

    try:
        import torch.distributed as dist
        dist.init_process_group(
            "gloo", init_method="file://" + store_path, rank=rank, world_size=world,
            timeout=datetime.timedelta(seconds=PG_TIMEOUT_S))
        state = setup(rank)
        report("ready")
        if variant == "fixed" or rank == caller:
            t0 = time.monotonic()
            report("entered")
            try:
                call(state, rank)
            except Exception as e:  # the expected outcome of a broken caller
                report("raised", elapsed=round(time.monotonic() - t0, 3),
                       error="%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
            else:
                report("returned", elapsed=round(time.monotonic() - t0, 3))
        else:
            report("skipped")
        # Stay in the job, alive and connected, until the parent has every
        # rank's outcome (or the watchdog kills us): a rank that left early
        # would fail its peers' calls with 'Connection closed by peer'.
        release.wait(WATCHDOG_S)
    except BaseException:
        report("crashed", error=traceback.format_exc(limit=3))
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        # Flush the queue's feeder thread: os._exit would drop what it holds.
        results.close()
        results.join_thread()
        # No teardown: a process group that timed out may hang in its destructor.
        os._exit(0)


class _Variant:
    """One 2-rank job (broken or fixed) in flight: its processes, queue and events."""

    def __init__(self, ctx, variant, caller, setup, call, world):
        self.variant, self.world = variant, world
        self.callers = list(range(world)) if variant == "fixed" else [caller]
        self.results = ctx.Queue()
        self.release = ctx.Event()
        self.events = {r: [] for r in range(world)}
        self.watchdog_fired = False
        self.finished = False
        self.procs = []
        fd, self.store_path = tempfile.mkstemp(prefix="ddplint-proof-", suffix=".store")
        os.close(fd)
        os.unlink(self.store_path)  # the FileStore creates it; a stale file would hold old keys
        self.t_start = time.monotonic()
        for rank in range(world):
            p = ctx.Process(target=_child, name="rank%d-%s" % (rank, variant),
                            args=(rank, world, self.store_path, variant, caller, setup, call,
                                  self.results, self.release))
            p.start()
            self.procs.append(p)

    def _done(self, r):
        final = ("raised", "returned", "crashed") if r in self.callers else ("skipped", "crashed")
        return any(e["event"] in final for e in self.events[r])

    def _drain(self):
        try:
            while True:
                msg = self.results.get_nowait()
                self.events[msg["rank"]].append(msg)
        except queue.Empty:
            pass

    def poll(self):
        """Takes the reports that arrived; sets `finished` when the verdict is known."""
        if self.finished:
            return
        self._drain()
        crashed = any(e["event"] == "crashed" for r in self.events for e in self.events[r])
        if all(self._done(r) for r in range(self.world)) or crashed:
            self.finish()
        elif time.monotonic() - self.t_start >= WATCHDOG_S:
            self.watchdog_fired = True
            self.finish()
        elif not any(p.is_alive() for p in self.procs):
            time.sleep(0.2)
            self._drain()
            self.finish()

    def finish(self):
        self.finished = True
        self.seconds = round(time.monotonic() - self.t_start, 2)
        self.release.set()

    def cleanup(self):
        """Kills and reaps every child, removes the store file.  Safe to call twice."""
        self.release.set()
        for p in self.procs:
            if p.is_alive():
                p.kill()
        for p in self.procs:
            p.join(5)
        try:
            os.unlink(self.store_path)
        except FileNotFoundError:
            pass


def _run_variants(caller, setup, call, world=2):
    """Runs the broken and the fixed job at the same time (the broken one mostly
    waits out its timeout) and returns both, finished."""
    ctx = multiprocessing.get_context("fork")
    variants = []
    try:
        for name in ("broken", "fixed"):
            variants.append(_Variant(ctx, name, caller, setup, call, world))
        while not all(v.finished for v in variants):
            for v in variants:
                v.poll()
            time.sleep(0.05)
    finally:
        for v in variants:
            v.cleanup()
    return variants


def _last(events, rank, *kinds):
    for e in reversed(events[rank]):
        if e["event"] in kinds:
            return e
    return None


def _check_broken(events, watchdog_fired, caller, world):
    """Returns (ok, why)."""
    for r in range(world):
        c = _last(events, r, "crashed")
        if c:
            return False, "rank %d crashed before or outside the call:\n%s" % (r, c["error"])
    other = [r for r in range(world) if r != caller]
    for r in other:
        if not _last(events, r, "skipped"):
            return False, "rank %d never reached the point where it skips the call" % r
    entered = _last(events, caller, "entered")
    if not entered:
        return False, "caller rank %d never entered the call (setup did not finish)" % caller
    ret = _last(events, caller, "returned")
    if ret:
        return False, ("caller rank %d RETURNED from the call after %.2f s while rank %s "
                       "skipped it: the call ran no collective that the other rank had to "
                       "join" % (caller, ret["elapsed"], ",".join(map(str, other))))
    raised = _last(events, caller, "raised")
    if raised:
        if raised["elapsed"] < MIN_BLOCK_S:
            return False, ("caller rank %d raised after only %.2f s (< %.1f s), not a "
                           "collective timeout: %s" % (caller, raised["elapsed"], MIN_BLOCK_S,
                                                       raised["error"]))
        return True, ("caller rank %d blocked in the call %.2f s, then: %s"
                      % (caller, raised["elapsed"], raised["error"]))
    if watchdog_fired:
        return True, ("caller rank %d was still blocked in the call when the %.0f s "
                      "watchdog killed the job" % (caller, WATCHDOG_S))
    return False, "caller rank %d left no outcome (died?)" % caller


def _check_fixed(events, watchdog_fired, world):
    for r in range(world):
        c = _last(events, r, "crashed")
        if c:
            return False, "rank %d crashed:\n%s" % (r, c["error"])
        raised = _last(events, r, "raised")
        if raised:
            return False, "rank %d raised in the call: %s" % (r, raised["error"])
        if not _last(events, r, "returned"):
            return False, ("rank %d did not return from the call%s" %
                           (r, " before the %.0f s watchdog" % WATCHDOG_S if watchdog_fired else ""))
    return True, "both ranks returned (%s)" % ", ".join(
        "rank %d in %.2f s" % (r, _last(events, r, "returned")["elapsed"]) for r in range(world))


def run_proof(name, setup, call, caller=0, world=2):
    """Runs the broken and the fixed variant; prints the verdicts; returns the exit status."""
    torch = import_torch()
    print("%s: torch %s, %s, Gloo, %d ranks, process-group timeout %.0f s, caller rank %d"
          % (name, torch.__version__, sys.executable, world, PG_TIMEOUT_S, caller))
    sys.stdout.flush()
    ok_all = True
    for v in _run_variants(caller, setup, call, world):
        if v.variant == "broken":
            ok, why = _check_broken(v.events, v.watchdog_fired, caller, world)
            expect = "the caller blocks"
        else:
            ok, why = _check_fixed(v.events, v.watchdog_fired, world)
            expect = "the job completes"
        ok_all &= ok
        print("  %-6s (%s): %s in %.1f s: %s" % (v.variant, expect, "PASS" if ok else "FAIL",
                                                v.seconds, why))
        if not ok:
            for r in sorted(v.events):
                print("    rank %d events: %s" % (r, v.events[r]))
        sys.stdout.flush()
    print("%s: %s" % (name, "ok" if ok_all else "FAILED"))
    return 0 if ok_all else 1

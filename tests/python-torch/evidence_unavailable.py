"""Checks that the reasons given for every `proof: unavailable: ...` in
rules/api.yaml (python.implicit_collectives) still hold on this machine, with Debian's torch
(/usr/bin/python3).  When one stops holding (torch gets FSDP on CPU, a package
becomes installable) this test fails and says which proof can now be written.

  FSDP (fsdp-*):           torch.distributed.fsdp does not import on this Python;
                           FSDP refuses CPU-only execution; its all-gather
                           (_all_gather_base) is not supported by Gloo.  The
                           FULL_STATE_DICT path's all-gather is read from the source.
  SyncBatchNorm:           forward refuses CPU tensors.
  torchmetrics, accelerate, lightning / pytorch_lightning, deepspeed: not importable.
"""
import datetime
import importlib.util
import os
import sys
import tempfile

from proof_harness import import_torch

failures = []


def check(cond, what):
    print("  %s: %s" % ("ok  " if cond else "FAIL", what))
    if not cond:
        failures.append(what)


def source(torch, rel):
    path = os.path.join(os.path.dirname(torch.__file__), rel)
    with open(path, encoding="utf-8") as f:
        return f.read()


def main():
    torch = import_torch()
    import torch.distributed as dist
    print("evidence_unavailable: torch %s, %s, Python %s" % (
        torch.__version__, sys.executable, sys.version.split()[0]))

    # FSDP (1): the import.
    try:
        import torch.distributed.fsdp  # noqa: F401
        err = None
    except Exception as e:  # noqa: BLE001: any failure is the evidence
        err = "%s: %s" % (type(e).__name__, e)
    check(err is not None and "mutable default" in err and "TensorProperties" in err,
          "`import torch.distributed.fsdp` fails with the dataclass 'mutable default ... "
          "TensorProperties' ValueError (got: %s); if it imports now, check whether FSDP "
          "runs on CPU/Gloo and write implicit_fsdp_state_dict.py" % (err or "it imported"))
    fsdp = source(torch, "distributed/fsdp/fully_sharded_data_parallel.py")
    flat = source(torch, "distributed/fsdp/flat_param.py")
    optim = source(torch, "distributed/fsdp/_optim_utils.py")
    # FSDP (2): CPU-only execution is refused in _lazy_init.
    lazy = fsdp[fsdp.find("def _lazy_init"):]
    lazy = lazy[:lazy.find("\n    def ", 10)]
    check("if not torch.cuda.is_available():" in lazy
          and "FSDP does not support CPU only execution" in lazy,
          "FSDP._lazy_init raises 'FSDP does not support CPU only execution' without CUDA")
    check(not torch.cuda.is_available(), "CUDA is unavailable on this machine")
    # The FULL_STATE_DICT path: state_dict -> _summon_full_params -> unshard -> _all_gather_base.
    sd = fsdp[fsdp.find("    def state_dict(self"):]
    sd = sd[:sd.find("\n    def ", 10)]
    check("StateDictType.FULL_STATE_DICT" in sd and "_summon_full_params" in sd,
          "FSDP.state_dict under FULL_STATE_DICT runs _summon_full_params")
    check("def unshard(self)" in flat and "self._all_gather_flat_param(" in flat
          and "dist._all_gather_base(" in flat,
          "FlatParamHandle.unshard all-gathers the flat parameter with dist._all_gather_base")
    check("def _communicate_optim_state" in optim and "dist._all_gather_base(" in optim,
          "full_optim_state_dict's _communicate_optim_state all-gathers with _all_gather_base")

    # FSDP (3) and SyncBatchNorm: on a real one-rank Gloo group.
    fd, store = tempfile.mkstemp(prefix="ddplint-evidence-", suffix=".store")
    os.close(fd)
    os.unlink(store)
    try:
        dist.init_process_group("gloo", init_method="file://" + store, rank=0, world_size=1,
                                timeout=datetime.timedelta(seconds=5))
        import warnings
        warnings.simplefilter("ignore")
        try:
            dist._all_gather_base(torch.empty(4), torch.ones(4))
            err = None
        except RuntimeError as e:
            err = str(e)
        check(err is not None and "no support for _allgather_base in Gloo" in err,
              "Gloo rejects _all_gather_base (got: %s)" % (err or "it worked"))
        bn = torch.nn.SyncBatchNorm(4)
        bn.train()
        try:
            bn(torch.randn(3, 4))
            err = None
        except ValueError as e:
            err = str(e)
        check(err is not None and "expected input tensor to be on GPU" in err,
              "SyncBatchNorm.forward refuses CPU tensors (got: %s)" % (err or "it ran"))
        dist.destroy_process_group()
    finally:
        if os.path.exists(store):
            os.unlink(store)

    # Third-party packages.
    for mod, entry in [("torchmetrics", "torchmetrics-metric-compute"),
                       ("accelerate", "accelerate-*"),
                       ("lightning", "lightning-*"),
                       ("pytorch_lightning", "lightning-*"),
                       ("deepspeed", "deepspeed-engine-*")]:
        found = importlib.util.find_spec(mod)
        check(found is None, "%s is not importable by %s%s" % (
            mod, sys.executable,
            "" if found is None else " (it is now, at %s: write the proof for %s)"
            % (found.origin, entry)))

    print("evidence_unavailable: %s" % ("ok" if not failures else
                                        "FAILED (%d reasons no longer hold)" % len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

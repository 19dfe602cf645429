#!/usr/bin/env python3
"""The stress corpus: code nobody here wrote.  Every function body in the
machine's installed library headers (LibTorch, c10, ATen, c10d, Gloo, NCCL,
OpenMPI's mpi.h, Eigen, Boost, yaml-cpp, LLVM's ADT) is analysed by the ddp
checks as if it were user code (`ddplint --analyze-library-code`).

Fails on a crash (ddplint reports it as a tool error, or dies), a hang (a
per-unit time limit), a unit that no longer compiles, and on fewer analysed
function bodies than each unit's floor, so that it can never quietly analyse
nothing.  Prints the counts and times.

    run_stress.py --ddplint BIN [--only NAME] [--timeout S] [--floor-scale F]
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def mpi_include():
    for d in ("/usr/lib/x86_64-linux-gnu/openmpi/include", "/usr/include/x86_64-linux-gnu/openmpi",
              "/usr/include/openmpi"):
        if os.path.exists(os.path.join(d, "mpi.h")):
            return d
    sys.exit("stress: OpenMPI's mpi.h not found (apt-get install libopenmpi-dev)")


def cuda_include():
    # nvcc may be a copy in /usr/local/bin (CI's PATH finds that one first), so
    # its directory is only one of the candidates.
    cands = []
    nvcc = shutil.which("nvcc")
    if nvcc:
        cands.append(os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))),
                                  "include"))
    cands += ["/usr/local/cuda/include", "/usr/include"]
    cands += sorted(glob.glob("/usr/local/cuda-*/include"), reverse=True)
    for d in cands:
        if os.path.exists(os.path.join(d, "nccl.h")):
            return d
    sys.exit("stress: nccl.h not found in " + ", ".join(cands) +
             " (the CUDA toolkit on the machine image)")


# (unit, flags, floor): the floor is the number of distinct function bodies
# the model builder must analyse (the path checks share one model per unit;
# about 2/3 of what was measured, so that a change to the analysis does not
# trip it, but a unit that analyses nothing does).  Measured counts are in
# docs/stress.md.
def units():
    mpi, cuda = mpi_include(), cuda_include()
    torch = ["-I/usr/include/torch/csrc/api/include", "-D_GLIBCXX_USE_CXX11_ABI=1",
             "-DUSE_C10D_GLOO"]
    return [
        ("torch_c10d.cpp", ["-std=c++17"] + torch, 25000),
        ("gloo.cpp", ["-std=c++17"], 1250),
        ("nccl_mpi.c", ["-xc", "-std=c11", f"-I{cuda}", f"-I{mpi}"], 40),
        ("mpi_nccl.cpp", ["-std=c++17", f"-I{cuda}", f"-I{mpi}"], 1375),
        ("eigen_boost.cpp", ["-std=c++17", "-I/usr/include/eigen3"], 2750),
        ("yaml_llvm.cpp", ["-std=c++17", "-I/usr/lib/llvm-19/include"], 2250),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ddplint", required=True)
    ap.add_argument("--only")
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--floor-scale", type=float, default=1.0,
                    help="scale every floor (never above 1 in CI)")
    a = ap.parse_args()
    failures, total, total_time = [], 0, 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for name, flags, floor in units():
            if a.only and a.only != name:
                continue
            src = os.path.join(HERE, name)
            report = os.path.join(tmp, name + ".json")
            cmd = [a.ddplint, "--analyze-library-code", "--jobs", "1", "--format", "json",
                   "-o", report, src, "--"] + flags
            t0 = time.monotonic()
            try:
                p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   timeout=a.timeout)
            except subprocess.TimeoutExpired:
                failures.append(f"{name}: hang: no answer within {a.timeout} s")
                continue
            dt = time.monotonic() - t0
            total_time += dt
            m = re.search(r"analysed (\d+) function bodies", p.stderr)
            count = int(m.group(1)) if m else 0
            total += count
            findings, errors = 0, []
            if os.path.exists(report):
                with open(report, encoding="utf-8") as f:
                    data = json.load(f)
                findings = len(data.get("findings", []))
                errors = [f"{e.get('file')}:{e.get('line')}: {e.get('message')}"
                          for e in data.get("toolErrors", [])]
            want = int(floor * a.floor_scale)
            print(f"stress: {name}: {count} function bodies analysed (floor {want}), "
                  f"{findings} findings in library code, {dt:.1f} s, exit {p.returncode}", flush=True)
            if p.returncode < 0 or p.returncode > 2:
                failures.append(f"{name}: ddplint died (exit {p.returncode}):\n{p.stderr[-3000:]}")
            elif p.returncode == 2 or errors:
                failures.append(f"{name}: tool errors (a crash or a unit that no longer compiles):\n  "
                                + "\n  ".join(errors[:20]) + "\n" + p.stderr[-2000:])
            if count < want:
                failures.append(f"{name}: only {count} function bodies analysed, floor {want}")
    for f in failures:
        print(f"stress: FAIL: {f}")
    print(f"stress: {total} function bodies analysed in {total_time:.1f} s: "
          f"{'OK' if not failures else f'{len(failures)} failure(s)'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Runs ddplint (every check) over the lit test programs with the mock headers
(C++), the real OpenMPI or NCCL header (C++ whose RUN line asks for it) or the
real MPI/NCCL headers (C).  Findings are expected; what fails is a
crash, a tool error, a sanitizer report or an exit code other than 0 or 1.

    run_lit_programs.py --ddplint BIN --lit-dir DIR --include DIR --mpi-include DIR
"""
import argparse
import json
import glob
import os
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ddplint", required=True)
    ap.add_argument("--lit-dir", required=True)
    ap.add_argument("--include", required=True)
    ap.add_argument("--mpi-include", required=True)
    a = ap.parse_args()
    def text(p):
        with open(p, encoding="utf-8") as f:
            return f.read()
    cpp = sorted(glob.glob(os.path.join(a.lit_dir, "*.cpp")))
    # C++ written against the installed OpenMPI header (its RUN line says
    # %mpi_cxx_flags) gets that header; the rest the mock headers.
    mpicxx = [p for p in cpp if "%mpi_cxx_flags" in text(p)]
    # ...and C++ against the real NCCL header (%nccl_flags) gets that one.
    ncclcxx = [p for p in cpp if "%nccl_flags" in text(p)]
    cxx = [p for p in cpp
           if "%torch_flags" not in text(p) and p not in mpicxx and p not in ncclcxx]
    c = sorted(glob.glob(os.path.join(a.lit_dir, "*.c")))
    runs = [(cxx, ["-std=c++17", "-isystem", a.include]),
            (mpicxx, ["-std=c++17", f"-I{a.mpi_include}", f"-I{a.mpi_include}/openmpi"]),
            (ncclcxx, ["-std=c++17", "-isystem", "/usr/local/cuda/include"]),
            (c, ["-xc", "-std=c11", f"-I{a.mpi_include}", "-I/usr/local/cuda/include"])]
    failures, files, findings = [], 0, 0
    for sources, flags in runs:
        if not sources:
            continue
        cmd = [a.ddplint, "--jobs", "2", "--fail-on", "never", "--format", "json"] + sources + ["--"] + flags
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=1500)
        files += len(sources)
        findings += len(json.loads(p.stdout).get("findings", [])) if p.stdout.strip().startswith("{") else 0
        bad = [l for l in p.stderr.splitlines()
               if "Sanitizer" in l or "runtime error:" in l or "crashed" in l]
        if p.returncode not in (0, 1) or bad:
            failures.append(f"exit {p.returncode}: {' '.join(cmd[:8])} ...\n" + "\n".join(bad[:40]) +
                            "\n" + p.stderr[-4000:])
    # The programs are the checks' true positives: a run that finds (nearly)
    # nothing has stopped analysing them.
    if findings < 40:
        failures.append(f"only {findings} findings in {files} programs (floor 40)")
    for f in failures:
        print(f"lit-programs: FAIL: {f}")
    print(f"lit-programs: {files} programs, {findings} findings: "
          f"{'OK' if not failures else f'{len(failures)} failure(s)'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

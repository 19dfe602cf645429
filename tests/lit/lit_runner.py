#!/usr/bin/env python3
"""A small runner for lit-style tests: executes the `// RUN:` lines of one test
file with its substitutions and fails on the first failing line.

    lit_runner.py --config FILE.json TEST.cpp

The JSON config (written by CMake) maps substitution names to values.
"""
import json
import os
import re
import subprocess
import sys
import tempfile


def run_lines(path):
    lines, pending = [], ""
    with open(path, encoding="utf-8") as f:
        for raw in f:
            m = re.search(r"//\s*RUN:\s?(.*)$", raw)
            if not m:
                continue
            part = m.group(1).rstrip()
            if part.endswith("\\"):
                pending += part[:-1] + " "
                continue
            lines.append(pending + part)
            pending = ""
    if pending:
        lines.append(pending)
    return lines


def main():
    if len(sys.argv) != 4 or sys.argv[1] != "--config":
        print("usage: lit_runner.py --config CONFIG.json TEST", file=sys.stderr)
        return 2
    with open(sys.argv[2], encoding="utf-8") as f:
        subst = json.load(f)
    test = os.path.abspath(sys.argv[3])
    runs = run_lines(test)
    if not runs:
        print(f"{test}: error: no RUN lines", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="ddplint-lit-") as tmp:
        subst = dict(subst)
        subst["%s"] = test
        subst["%S"] = os.path.dirname(test)
        subst["%t"] = os.path.join(tmp, "t")
        # Longest names first so %check_ddp_tidy wins over %c...
        keys = sorted(subst, key=len, reverse=True)
        pattern = re.compile("|".join(re.escape(k) for k in keys))
        for i, line in enumerate(runs, 1):
            cmd = pattern.sub(lambda m: subst[m.group(0)], line)
            print(f"RUN {i}: {cmd}", flush=True)
            proc = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=tmp)
            if proc.returncode != 0:
                print(f"{test}: RUN line {i} failed with exit code {proc.returncode}",
                      file=sys.stderr)
                return 1
    print(f"PASS: {os.path.basename(test)} ({len(runs)} RUN lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Runs one lit test (tests/lit/*.cpp) with a clang-tidy that has the ddp
checks linked in, instead of the stock clang-tidy plus --load.

    run_lit_linked.py --config LIT-CONFIG.json --clang-tidy BIN TEST.cpp

It takes the plugin run's substitutions (so the compile flags cannot drift
apart), points %check_ddp_tidy and %clang_tidy at BIN, gives no plugin, and
drops %plugin so that a RUN line that loads the plugin itself fails instead of
silently testing the plugin again.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

LIT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lit")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", required=True)
    p.add_argument("--clang-tidy", required=True)
    p.add_argument("test")
    a = p.parse_args()
    with open(a.config, encoding="utf-8") as f:
        subst = json.load(f)
    subst.pop("%plugin", None)
    subst["%clang_tidy"] = a.clang_tidy
    subst["%check_ddp_tidy"] = (
        f"env DDPLINT_CLANG_TIDY={a.clang_tidy} DDPLINT_PLUGIN= "
        f"DDPLINT_FILECHECK={subst['%FileCheck']} "
        f"python3 {os.path.join(LIT, 'check_ddp_tidy.py')}")
    with tempfile.NamedTemporaryFile("w", suffix=".json", prefix="lit-linked-",
                                     delete=False) as f:
        json.dump(subst, f)
        config = f.name
    try:
        return subprocess.run([sys.executable, os.path.join(LIT, "lit_runner.py"),
                               "--config", config, a.test]).returncode
    finally:
        os.unlink(config)


if __name__ == "__main__":
    sys.exit(main())

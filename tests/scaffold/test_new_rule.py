#!/usr/bin/env python3
"""scripts/new-rule.py on a copy of the repository, as a person adding a rule
would use it: configure, build the generator, scaffold a toy rule, build the
plugin and the CLI, and run the consistency test and the new rule's own tests
(the C++ lit test on the mock and the real LibTorch headers, the Python test).
Also: the scaffold refuses an id that exists and a malformed id, and the files
it writes are exactly the five a person then edits by hand (plus the
generated docs index).

    test_new_rule.py --repo DIR [--keep]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

RULE = "ddp-toy-barrier-in-loop"


def run(cmd, cwd=None, timeout=1500):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=timeout)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {p.returncode}:\n{p.stdout[-6000:]}")
    return p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", required=True)
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ddplint-scaffold-")
    try:
        repo, build = os.path.join(tmp, "repo"), os.path.join(tmp, "build")
        os.makedirs(repo)
        # The working tree as a clone would have it (tracked and new files).
        files = run(["git", "ls-files", "-co", "--exclude-standard"], cwd=a.repo).split("\n")
        for f in filter(None, files):
            src = os.path.join(a.repo, f)
            if os.path.isfile(src):
                os.makedirs(os.path.dirname(os.path.join(repo, f)), exist_ok=True)
                shutil.copy2(src, os.path.join(repo, f))
        run(["git", "init", "-q"], cwd=repo)
        run(["git", "add", "-A"], cwd=repo)
        run(["git", "-c", "user.name=ddplint", "-c", "user.email=ddplint@localhost", "commit", "-qm",
             "before the scaffold"], cwd=repo)
        # Debug: the copy's build only has to compile, as fast as it can.
        run(["cmake", "-S", repo, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Debug",
             "-DDDPLINT_BUILD_HARNESS=OFF", "-DDDPLINT_BUILD_TESTS=ON"])
        run(["ninja", "-C", build, "ddplint-gen-catalog"])
        gen = os.path.join(build, "internal", "ddplint-gen-catalog")
        script = os.path.join(repo, "scripts", "new-rule.py")

        # Refusals first: they must leave the tree untouched.
        for bad in (["ddp-divergent-collective"], ["Toy"], [RULE, "--languages", "c,rust"]):
            p = subprocess.run([sys.executable, script, *bad, "--repo", repo, "--gen", gen],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if p.returncode == 0:
                sys.exit(f"FAIL: new-rule.py accepted {bad}:\n{p.stdout}")
        if run(["git", "status", "--porcelain"], cwd=repo).strip():
            sys.exit("FAIL: a refused scaffold changed the tree:\n" +
                     run(["git", "status", "--porcelain"], cwd=repo))

        print(run([sys.executable, script, RULE, "--repo", repo, "--gen", gen]))
        changed = sorted(l[3:] for l in run(["git", "status", "--porcelain", "-uall"],
                                              cwd=repo).splitlines())
        expected = sorted(["rules/catalog.yaml", "checks/core/rules/ToyBarrierInLoop.cpp",
                           "tests/lit/toy-barrier-in-loop.cpp",
                           "tests/python/toy_barrier_in_loop.py",
                           f"docs/checks/{RULE}.md", "docs/checks/README.md"])
        if changed != expected:
            sys.exit(f"FAIL: the scaffold touched {changed}, expected {expected}")
        p = subprocess.run([sys.executable, script, RULE, "--repo", repo, "--gen", gen],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode == 0:
            sys.exit("FAIL: a second scaffold of the same rule was accepted")

        run(["ninja", "-C", build, "ddplint-tidy", "ddplint", "ddplint-gen-catalog"])
        listed = run(["/usr/lib/llvm-19/bin/clang-tidy",
                      f"--load={os.path.join(build, 'lib', 'ddplint-tidy.so')}",
                      "--checks=-*,ddp-*", "--list-checks"])
        if RULE not in listed:
            sys.exit(f"FAIL: the plugin does not register {RULE}:\n{listed}")
        out = run(["ctest", "--test-dir", build, "--output-on-failure", "-R",
                   "^(consistency/catalog|lit/toy-barrier-in-loop|python/lit/toy_barrier_in_loop)$"])
        if "100% tests passed, 0 tests failed out of 3" not in out:
            sys.exit("FAIL: the scaffolded rule's tests did not all run and pass:\n" + out)
        print(out[-600:])
        print(f"new-rule: {RULE} scaffolded, built, registered and tested: OK")
        return 0
    finally:
        if a.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Runs clang-tidy with the ddplint plugin on a test file and verifies its
diagnostics and fixes the way clang-tidy's own check tests do:

  * `// CHECK-MESSAGES: :[[@LINE-1]]:col: warning|remark: ... [ddp-...]` lines are
    FileCheck'ed against clang-tidy's output, and any warning or error that no
    CHECK-MESSAGES line expects fails the test;
  * `// CHECK-FIXES: ...` lines are FileCheck'ed against the file after -fix.

    check_ddp_tidy.py [--prefix P] SOURCE CHECKS TMP [-- TIDY-ARGS] -- COMPILE-ARGS

Tool paths come from the environment: DDPLINT_CLANG_TIDY, DDPLINT_PLUGIN,
DDPLINT_FILECHECK.  An empty or unset DDPLINT_PLUGIN runs DDPLINT_CLANG_TIDY
without `--load`, for a clang-tidy with the checks linked in
(build/bin/ddplint-clang-tidy).
"""
import os
import re
import shutil
import subprocess
import sys


def fail(msg):
    print(f"check_ddp_tidy: {msg}", file=sys.stderr)
    sys.exit(1)


def main():
    args = sys.argv[1:]
    prefix = "CHECK"
    if args[:1] == ["--prefix"]:
        prefix, args = args[1], args[2:]
    if len(args) < 3:
        fail("usage: check_ddp_tidy.py [--prefix P] SOURCE CHECKS TMP [-- TIDY-ARGS] -- COMPILE-ARGS")
    source, checks, tmp = args[0], args[1], args[2]
    rest = args[3:]
    tidy_args, compile_args = [], []
    if "--" in rest:
        first = rest.index("--")
        rest = rest[first + 1:]
        if "--" in rest:
            second = rest.index("--")
            tidy_args, compile_args = rest[:second], rest[second + 1:]
        else:
            compile_args = rest
    clang_tidy = os.environ["DDPLINT_CLANG_TIDY"]
    plugin = os.environ.get("DDPLINT_PLUGIN", "")
    filecheck = os.environ["DDPLINT_FILECHECK"]

    with open(source, encoding="utf-8") as f:
        text = f.read()
    msg_prefix, fix_prefix = f"{prefix}-MESSAGES", f"{prefix}-FIXES"
    has_msgs = re.search(rf"//\s*{msg_prefix}:", text) is not None
    has_fixes = re.search(rf"//\s*{fix_prefix}:", text) is not None
    # Blank the CHECK lines in the copy clang-tidy sees (same line numbers), so
    # CHECK-FIXES cannot match its own pattern text.
    cleaned = re.sub(r"//\s*[A-Z][A-Z0-9]*-(?:MESSAGES|FIXES)[A-Z-]*:[^\n]*", "//", text)
    os.makedirs(os.path.dirname(tmp) or ".", exist_ok=True)
    ext = os.path.splitext(source)[1] or ".cpp"
    work = tmp + ext
    with open(work, "w", encoding="utf-8") as f:
        f.write(cleaned)

    load = [f"--load={plugin}"] if plugin else []
    cmd = [clang_tidy] + load + [f"--checks=-*,{checks}", "--fix",
           "--header-filter=^$", "--quiet"] + tidy_args + [work, "--"] + compile_args
    print(" ".join(cmd), flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = proc.stdout
    print(out)
    if "[clang-diagnostic-error]" in out or "Error while processing" in out:
        fail(f"clang-tidy reported a compile error (exit {proc.returncode}); a test file must compile")
    # A clang-tidy without the ddp module enables nothing, prints no warnings
    # and would pass every test that expects none.
    if "no checks enabled" in out:
        fail(f"clang-tidy knows no check matching '{checks}' (is the ddp module loaded or linked in?)")
    out_file = tmp + ".msgs"
    with open(out_file, "w", encoding="utf-8") as f:
        f.write(out)

    if has_msgs:
        r = subprocess.run([filecheck, source, f"--check-prefix={msg_prefix}",
                            "--input-file", out_file,
                            "--implicit-check-not={{warning|error|remark}}:"])
        if r.returncode != 0:
            fail("CHECK-MESSAGES did not match clang-tidy's output")
    elif re.search(r"(warning|error|remark):", out):
        fail("unexpected diagnostics (the test expects none)")

    if has_fixes:
        r = subprocess.run([filecheck, source, f"--check-prefix={fix_prefix}",
                            "--input-file", work, "--strict-whitespace"])
        if r.returncode != 0:
            fail("CHECK-FIXES did not match the fixed file")
    print("check_ddp_tidy: OK")


if __name__ == "__main__":
    main()

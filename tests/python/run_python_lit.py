#!/usr/bin/env python3
"""Lit-style runner for the Python frontend's test corpus (tests/python/*.py).

    run_python_lit.py --ddplint BIN FILE.py [--keep]
    run_python_lit.py --self-test

Annotations (comments in FILE.py; they mirror clang-tidy's check_clang_tidy):

  # CHECK-MESSAGES: :[[@LINE+N]]:COL: SEVERITY: MESSAGE [ddp-rule]
      One finding expected at line (this line + N; also [[@LINE]], [[@LINE-N]]),
      1-based column COL, severity error|warning|note, rule ddp-rule, and a
      message that contains MESSAGE.  MESSAGE is literal text except for
      {{regex}} parts (FileCheck style); it may be empty.
  # CHECK-FIXES: TEXT
      After `BIN --fix` on a fresh copy, TEXT ({{regex}} allowed) occurs in a
      line of the fixed file; several CHECK-FIXES match in order, each on a line
      after the previous match.
  # CONFIG: YAML-LINE
      Written (in order, text after "CONFIG: " verbatim) to .ddplint.yaml next
      to the copy.
  # CHECK-LIMIT: :[[@LINE+N]]:COL: MESSAGE
      One "analysisLimits" entry expected there (a function whose analysis
      stopped at a limit).  Every entry must be annotated, as findings are.
  # EXPECT-TOOL-ERROR
      The file is expected to produce tool errors (exit code 2 and a non-empty
      "toolErrors" list); findings are still compared.
  # CHECK-ERROR: :[[@LINE+N]]: MESSAGE
      (optional, with EXPECT-TOOL-ERROR) an error entry at that line whose
      message contains MESSAGE ({{regex}} allowed).

Every finding must be matched by exactly one CHECK-MESSAGES, and every
CHECK-MESSAGES by exactly one finding.  Annotation comments are replaced by a
bare "#" in the copy that is linted, so lines and columns do not move and the
CHECK-FIXES texts cannot match themselves.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ANNOT_RE = re.compile(
    r"#\s*(CHECK-MESSAGES|CHECK-FIXES|CHECK-ERROR|CHECK-LIMIT|CONFIG|EXPECT-TOOL-ERROR)\b.*$")
MSG_RE = re.compile(
    r"#\s*CHECK-MESSAGES:\s*:\[\[@LINE(?P<off>[+-]\d+)?\]\]:(?P<col>\d+):\s*"
    r"(?P<sev>error|warning|note):\s?(?P<msg>.*?)\s*\[(?P<rule>ddp-[a-z0-9-]+)\]\s*$")
FIX_RE = re.compile(r"#\s*CHECK-FIXES:\s?(?P<text>.*?)\s*$")
CFG_RE = re.compile(r"#\s*CONFIG:\s?(?P<text>.*?)\s*$")
ERR_RE = re.compile(r"#\s*CHECK-ERROR:\s*:\[\[@LINE(?P<off>[+-]\d+)?\]\]:\s?(?P<msg>.*?)\s*$")
LIMIT_RE = re.compile(
    r"#\s*CHECK-LIMIT:\s*:\[\[@LINE(?P<off>[+-]\d+)?\]\]:(?P<col>\d+):\s?(?P<msg>.*?)\s*$")
EXPECT_ERR_RE = re.compile(r"#\s*EXPECT-TOOL-ERROR\b")


class Spec:
    def __init__(self):
        self.messages = []   # dicts: line, col, sev, rule, msg, regex, src
        self.fixes = []      # (src line, text, regex)
        self.config = []     # yaml lines
        self.errors = []     # dicts: line, msg, regex, src
        self.limits = []     # dicts: line, col, msg, regex, src
        self.expect_tool_error = False
        self.problems = []   # malformed annotations


def filecheck_regex(pattern):
    """FileCheck-style text: literal, except {{...}} parts, which are regexes."""
    out, pos = [], 0
    for m in re.finditer(r"\{\{(.*?)\}\}", pattern):
        out.append(re.escape(pattern[pos:m.start()]))
        out.append("(?:" + m.group(1) + ")")
        pos = m.end()
    out.append(re.escape(pattern[pos:]))
    return re.compile("".join(out))


def parse_annotations(text):
    spec = Spec()
    for idx, line in enumerate(text.splitlines(), 1):
        m = ANNOT_RE.search(line)
        if not m:
            continue
        kind = m.group(1)
        chunk = m.group(0)
        if kind == "CHECK-MESSAGES":
            mm = MSG_RE.search(chunk)
            if not mm:
                spec.problems.append(f"line {idx}: malformed CHECK-MESSAGES: {chunk}")
                continue
            off = int(mm.group("off") or 0)
            try:
                rx = filecheck_regex(mm.group("msg"))
            except re.error as e:
                spec.problems.append(f"line {idx}: bad regex in message: {e}")
                continue
            spec.messages.append(dict(line=idx + off, col=int(mm.group("col")),
                                      sev=mm.group("sev"), rule=mm.group("rule"),
                                      msg=mm.group("msg"), regex=rx, src=idx))
        elif kind == "CHECK-FIXES":
            mm = FIX_RE.search(chunk)
            if not mm or not mm.group("text"):
                spec.problems.append(f"line {idx}: empty CHECK-FIXES")
                continue
            spec.fixes.append((idx, mm.group("text"), filecheck_regex(mm.group("text"))))
        elif kind == "CONFIG":
            mm = CFG_RE.search(chunk)
            spec.config.append(mm.group("text") if mm else "")
        elif kind == "CHECK-ERROR":
            mm = ERR_RE.search(chunk)
            if not mm:
                spec.problems.append(f"line {idx}: malformed CHECK-ERROR: {chunk}")
                continue
            spec.errors.append(dict(line=idx + int(mm.group("off") or 0), msg=mm.group("msg"),
                                    regex=filecheck_regex(mm.group("msg")), src=idx))
        elif kind == "CHECK-LIMIT":
            mm = LIMIT_RE.search(chunk)
            if not mm:
                spec.problems.append(f"line {idx}: malformed CHECK-LIMIT: {chunk}")
                continue
            spec.limits.append(dict(line=idx + int(mm.group("off") or 0), col=int(mm.group("col")),
                                    msg=mm.group("msg"), regex=filecheck_regex(mm.group("msg")),
                                    src=idx))
        elif kind == "EXPECT-TOOL-ERROR":
            spec.expect_tool_error = True
    return spec


def strip_annotations(text):
    """Replace every annotation comment by '#': same lines, same columns of code."""
    out = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        eol = line[len(body):]
        m = ANNOT_RE.search(body)
        if m:
            body = body[:m.start()] + "#"
        out.append(body + eol)
    return "".join(out)


def match_findings(spec, findings):
    """Returns (missing annotations, unexpected findings)."""
    used = [False] * len(findings)
    missing = []
    # Most specific first: annotations with longer literal messages pick first.
    order = sorted(range(len(spec.messages)), key=lambda i: -len(spec.messages[i]["msg"]))
    for i in order:
        exp = spec.messages[i]
        hit = None
        for j, f in enumerate(findings):
            if used[j]:
                continue
            if (f.get("line") == exp["line"] and f.get("column") == exp["col"]
                    and f.get("rule") == exp["rule"] and f.get("severity") == exp["sev"]
                    and exp["regex"].search(f.get("message", ""))):
                hit = j
                break
        if hit is None:
            missing.append(exp)
        else:
            used[hit] = True
    unexpected = [f for j, f in enumerate(findings) if not used[j]]
    return missing, unexpected


def match_fixes(spec, fixed_text):
    """Ordered CHECK-FIXES: returns the list of failures (empty on success)."""
    lines = fixed_text.splitlines()
    pos, fails = 0, []
    for src, text, rx in spec.fixes:
        found = None
        for k in range(pos, len(lines)):
            if rx.search(lines[k]):
                found = k
                break
        if found is None:
            fails.append(f"CHECK-FIXES at line {src}: '{text}' not found in the fixed file "
                         f"after line {pos}")
        else:
            pos = found + 1
    return fails


def fmt_finding(f):
    return (f"{f.get('line')}:{f.get('column')}: {f.get('severity')}: "
            f"{f.get('message')} [{f.get('rule')}]")


def fmt_expect(e):
    return (f"{e['line']}:{e['col']}: {e['sev']}: {e['msg']} [{e['rule']}]"
            f"   (annotation on line {e['src']})")


def prepare_copy(tmp, name, cleaned, spec):
    path = os.path.join(tmp, name)
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(cleaned)
    if spec.config:
        with open(os.path.join(tmp, ".ddplint.yaml"), "w", encoding="utf-8") as f:
            f.write("\n".join(spec.config) + "\n")
    return path


def same_file(reported, target, cwd):
    if reported is None:
        return False
    p = reported if os.path.isabs(reported) else os.path.join(cwd, reported)
    return os.path.realpath(p) == os.path.realpath(target)


def run_test(ddplint, test, keep=False):
    with open(test, encoding="utf-8") as f:
        text = f.read()
    spec = parse_annotations(text)
    name = os.path.basename(test)
    failures = list(spec.problems)
    cleaned = strip_annotations(text)

    tmp = tempfile.mkdtemp(prefix="ddplint-py-")
    try:
        path = prepare_copy(tmp, name, cleaned, spec)
        cmd = [ddplint, "--format", "json", "--fail-on", "never", "--root", tmp, path]
        print("RUN:", " ".join(cmd), flush=True)
        try:
            proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=240)
        except (OSError, subprocess.TimeoutExpired) as e:
            print(f"{test}: error: could not run ddplint: {e}", file=sys.stderr)
            return 1
        try:
            report = json.loads(proc.stdout)
        except ValueError:
            print(f"{test}: error: ddplint (exit {proc.returncode}) did not print JSON\n"
                  f"--- stdout ---\n{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-4000:]}",
                  file=sys.stderr)
            return 1
        findings = report.get("findings", []) or []
        errors = report.get("toolErrors", []) or []
        limits = [l for l in report.get("analysisLimits", []) or []
                  if same_file(l.get("file"), path, tmp)]
        for e in spec.limits:
            hit = next((l for l in limits if l.get("line") == e["line"]
                        and l.get("column") == e["col"] and e["regex"].search(l.get("message", ""))),
                       None)
            if hit is None:
                failures.append(f"CHECK-LIMIT at line {e['src']}: no analysis limit at "
                                f"{e['line']}:{e['col']} containing '{e['msg']}'")
            else:
                limits.remove(hit)
        for l in limits:
            failures.append(f"unexpected analysis limit {l.get('line')}:{l.get('column')}: "
                            f"{l.get('message')}")
        ours = [f for f in findings if same_file(f.get("file"), path, tmp)]
        foreign = [f for f in findings if not same_file(f.get("file"), path, tmp)]
        for f in foreign:
            failures.append(f"finding in another file: {f.get('file')}:{fmt_finding(f)}")

        if spec.expect_tool_error:
            if not errors:
                failures.append("EXPECT-TOOL-ERROR: the tool reported no error")
            if proc.returncode not in (0, 2):
                failures.append(f"exit code {proc.returncode} (expected 2 for a tool error)")
            for e in spec.errors:
                if not any(err.get("line") == e["line"] and e["regex"].search(err.get("message", ""))
                           for err in errors):
                    failures.append(f"CHECK-ERROR at line {e['src']}: no error at line {e['line']} "
                                    f"containing '{e['msg']}'")
        else:
            if errors or proc.returncode != 0:
                failures.append(f"tool errors (exit code {proc.returncode}):")
                for err in errors:
                    failures.append(f"    {err.get('file')}:{err.get('line')}:{err.get('column')}: "
                                    f"{err.get('message')}")
                if proc.stderr.strip():
                    failures.append("    stderr: " + proc.stderr.strip()[-2000:])

        missing, unexpected = match_findings(spec, ours)
        if missing or unexpected:
            failures.append("findings differ from the annotations:")
            for e in sorted(missing, key=lambda e: (e["line"], e["col"])):
                failures.append("  - expected " + fmt_expect(e))
                near = [f for f in ours if f.get("line") == e["line"]]
                for f in near:
                    failures.append("      (on that line: " + fmt_finding(f) + ")")
            for f in sorted(unexpected, key=lambda f: (f.get("line", 0), f.get("column", 0))):
                failures.append("  + unexpected " + fmt_finding(f))

        if spec.fixes:
            fixdir = tempfile.mkdtemp(prefix="ddplint-py-fix-", dir=tmp)
            fpath = prepare_copy(fixdir, name, cleaned, spec)
            fcmd = [ddplint, "--fix", "--fail-on", "never", "--root", fixdir, fpath]
            print("RUN:", " ".join(fcmd), flush=True)
            try:
                fproc = subprocess.run(fcmd, cwd=fixdir, capture_output=True, text=True,
                                       timeout=240)
                rc_ok = fproc.returncode == 0 or (spec.expect_tool_error and fproc.returncode == 2)
                if not rc_ok:
                    failures.append(f"--fix exited {fproc.returncode}: {fproc.stderr.strip()[-2000:]}")
                with open(fpath, encoding="utf-8") as f:
                    fixed = f.read()
                fails = match_fixes(spec, fixed)
                if fails:
                    failures.extend(fails)
                    failures.append("--- fixed file ---\n" + fixed)
            except (OSError, subprocess.TimeoutExpired) as e:
                failures.append(f"could not run ddplint --fix: {e}")
    finally:
        if keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    if failures:
        print(f"FAIL: {name}", file=sys.stderr)
        for line in failures:
            print(line, file=sys.stderr)
        return 1
    print(f"PASS: {name} ({len(spec.messages)} findings, {len(spec.fixes)} fix checks)")
    return 0


SELF_TEST_SAMPLE = '''\
# CONFIG: launch:
# CONFIG:   torch_version: "1.13"
import torch.distributed as dist
def f(t):
    if dist.get_rank() == 0:
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: runs only on {{.*}} [ddp-divergent-collective]
        dist.all_reduce(t)
    dist.init_process_group("gloo")  # CHECK-MESSAGES: :[[@LINE]]:5: warning: timeout [ddp-init-timeout]
    # CHECK-FIXES: timeout=
    x = 1
# CHECK-MESSAGES: :[[@LINE-1]]:5: note: [ddp-dataloader-recreated]
'''


def self_test_all():
    spec = parse_annotations(SELF_TEST_SAMPLE)
    assert not spec.problems, spec.problems
    assert spec.config == ["launch:", '  torch_version: "1.13"'], spec.config
    got = [(m["line"], m["col"], m["sev"], m["rule"]) for m in spec.messages]
    assert got == [(7, 9, "error", "ddp-divergent-collective"),
                   (8, 5, "warning", "ddp-init-timeout"),
                   (10, 5, "note", "ddp-dataloader-recreated")], got
    assert spec.messages[0]["regex"].search("collective 'all_reduce' runs only on ranks where x")
    assert not spec.messages[0]["regex"].search("runs on every rank")
    assert spec.messages[2]["regex"].search("anything")
    cleaned = strip_annotations(SELF_TEST_SAMPLE)
    assert "CHECK" not in cleaned and "CONFIG" not in cleaned
    assert cleaned.count("\n") == SELF_TEST_SAMPLE.count("\n")
    assert '    dist.init_process_group("gloo")  #\n' in cleaned
    findings = [
        dict(line=7, column=9, rule="ddp-divergent-collective", severity="error",
             message="collective 'all_reduce' runs only on ranks where 'rank == 0' holds"),
        dict(line=8, column=5, rule="ddp-init-timeout", severity="warning",
             message="created without an explicit timeout"),
        dict(line=10, column=5, rule="ddp-dataloader-recreated", severity="note", message="x"),
    ]
    missing, unexpected = match_findings(spec, findings)
    assert not missing and not unexpected, (missing, unexpected)
    # Wrong column, wrong severity, duplicate finding, extra finding.
    bad = [dict(findings[0], column=5), dict(findings[1], severity="error"), findings[2],
           findings[2], dict(line=3, column=1, rule="ddp-unguarded-save", severity="error",
                             message="m")]
    missing, unexpected = match_findings(spec, bad)
    assert len(missing) == 2 and len(unexpected) == 4, (missing, unexpected)
    # Fixes: in order, each after the previous match.
    spec2 = parse_annotations("# CHECK-FIXES: barrier()\n# CHECK-FIXES: if rank == 0:\n"
                              "# CHECK-FIXES: barrier()\n")
    ok = "x\ndist.barrier()\nif rank == 0:\n    torch.save(m, p)\ndist.barrier()\n"
    assert match_fixes(spec2, ok) == []
    assert match_fixes(spec2, "if rank == 0:\n    torch.save(m, p)\ndist.barrier()\n")
    # Malformed annotations are failures, not silently ignored.
    spec3 = parse_annotations("# CHECK-MESSAGES: [[@LINE+1]]:9 error: x [ddp-x]\n")
    assert spec3.problems
    spec4 = parse_annotations("# EXPECT-TOOL-ERROR\n# CHECK-ERROR: :[[@LINE+1]]: {{.*}}\n")
    assert spec4.expect_tool_error and spec4.errors[0]["line"] == 3
    spec5 = parse_annotations("def main():  # CHECK-LIMIT: :[[@LINE]]:1: more than {{[0-9]+}} paths\n")
    assert not spec5.problems and spec5.limits[0]["line"] == 1 and spec5.limits[0]["col"] == 1
    assert spec5.limits[0]["regex"].search("'main' has more than 512 paths")
    assert parse_annotations("# CHECK-LIMIT: [[@LINE]] x\n").problems
    print("PASS: run_python_lit.py self-test")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ddplint")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("file", nargs="?")
    a = ap.parse_args()
    if a.self_test:
        return self_test_all()
    if not a.ddplint or not a.file:
        ap.error("--ddplint BIN FILE required")
    ddplint = a.ddplint
    if os.sep in ddplint:  # a path, not a name on PATH: the runner changes folders
        ddplint = os.path.abspath(ddplint)
    return run_test(ddplint, os.path.abspath(a.file), a.keep)


if __name__ == "__main__":
    sys.exit(main())

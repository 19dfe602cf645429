#!/usr/bin/env python3
"""validate_sarif.py must reject broken SARIF, each of its two checks on its own.

Without this, a validator that checks nothing (a schema that no longer loads, a
Multitool that never runs its rules, an option it stopped accepting) would
still let report/sarif-valid pass.  Each case takes the writers' own sample log
(argv[1], from sarif_driver), breaks one thing, and expects the named check to
fail with the named rule.

  test_validate_sarif.py SAMPLE.sarif
"""
import copy
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
VALIDATE = os.path.join(HERE, "validate_sarif.py")


def run_validator(log, *args, env=None):
    with tempfile.NamedTemporaryFile("w", suffix=".sarif", delete=False) as f:
        json.dump(log, f, indent=2)
        path = f.name
    try:
        p = subprocess.run([sys.executable, VALIDATE, *args, path], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, env=env, timeout=300)
        return p.returncode, p.stdout
    finally:
        os.unlink(path)


def first_result(log):
    return log["runs"][0]["results"][0]


def mutations():
    """(name, which check must catch it, text the failure must show, mutate(log))."""
    def bad_level(log):
        first_result(log)["level"] = "fatal"

    def string_line(log):
        first_result(log)["locations"][0]["physicalLocation"]["region"]["startLine"] = "12"

    def no_version(log):
        del log["version"]

    def no_message(log):
        del first_result(log)["message"]

    def no_help(log):
        del log["runs"][0]["tool"]["driver"]["rules"][0]["help"]

    def no_short_description(log):
        del log["runs"][0]["tool"]["driver"]["rules"][0]["shortDescription"]

    def slash_uri(log):
        art = first_result(log)["locations"][0]["physicalLocation"]["artifactLocation"]
        art["uri"] = "/" + art["uri"]

    def context_not_superset(log):
        phys = first_result(log)["locations"][0]["physicalLocation"]
        phys["contextRegion"] = {"startLine": phys["region"]["startLine"] + 5}

    return [
        ("invalid level", "schema", "fatal", bad_level),
        ("startLine as a string", "schema", "startLine", string_line),
        ("no version", "schema", "'version' is a required property", no_version),
        ("result without message", "schema", "'message' is a required property", no_message),
        ("rule without help (GitHub)", "multitool", "GH2012", no_help),
        ("rule without shortDescription (GitHub)", "multitool", "GH2012", no_short_description),
        ("relative URI with a leading slash", "multitool", "SARIF1004", slash_uri),
        ("contextRegion not around region", "multitool", "SARIF1008", context_not_superset),
    ]


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        good = json.load(f)
    failures = []

    # The control: the sample passes both checks, so the rejections below are
    # about what each mutation broke.
    for only in ("schema", "multitool"):
        rc, out = run_validator(good, "--only", only)
        if rc != 0:
            failures.append(f"sample log rejected by {only} check (exit {rc}):\n{out}")

    for name, check, expect, mutate in mutations():
        log = copy.deepcopy(good)
        mutate(log)
        for args in (("--only", check), ()):
            rc, out = run_validator(log, *args)
            label = f"{name} [{' '.join(args) or 'both checks'}]"
            if rc != 1:
                failures.append(f"{label}: expected exit 1 (invalid), got {rc}:\n{out}")
            elif expect not in out:
                failures.append(f"{label}: rejected, but without '{expect}':\n{out}")
            else:
                print(f"ok: {label} rejected ({expect})")

    # A missing validator fails loudly instead of passing.
    env = dict(os.environ, DDPLINT_SARIF_TOOLS=os.path.join(tempfile.gettempdir(), "no-such-dir"))
    rc, out = run_validator(good, env=env)
    if rc != 2 or "validator unavailable" not in out:
        failures.append(f"missing validator: expected exit 2 and 'validator unavailable', got {rc}:\n{out}")
    else:
        print("ok: missing validator is a failure (exit 2)")

    for f in failures:
        print(f"FAIL: {f}")
    print(f"{len(mutations()) * 2 + 3 - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Validates a SARIF log the way GitHub code scanning will judge it.

Two independent checks, both must pass:
  schema     the SARIF 2.1.0 JSON schema (draft 2020-12) with python3-jsonschema
  multitool  Microsoft's validator, `Sarif.Multitool validate --rule-kind Sarif;Gh`:
             the SARIF spec rules (SARIF1xxx errors, SARIF2xxx warnings) and the
             GitHub ingestion rules (GH1xxx/GH2xxx)
Any error-level result fails; warnings are printed, and fail with --strict
(except the rule ids given with --allow).

Both are installed by scripts/setup-sarif-validator.sh into
/opt/ddplint-tools/sarif-multitool-5.7.0 (or $DDPLINT_SARIF_TOOLS).  A missing
validator is a failure, not a skip: a SARIF test that silently checks nothing
would let broken logs through to code scanning.

The schema check is not redundant: Multitool 5.7.0 reports nothing at all, and
exits 0, for a log whose enum value is invalid (e.g. "level": "fatal").

Exit status: 0 valid, 1 invalid, 2 validator missing or broken.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

DEFAULT_TOOLS = "/opt/ddplint-tools/sarif-multitool-5.7.0"
SETUP_HINT = "run: sudo bash scripts/setup-sarif-validator.sh"


def tools_dir():
    return os.environ.get("DDPLINT_SARIF_TOOLS", DEFAULT_TOOLS)


class ValidatorMissing(Exception):
    pass


def check_schema(log, schema_path):
    """Returns a list of ("schema", "schema: <path>: <message>")."""
    try:
        import jsonschema
    except ImportError as e:
        raise ValidatorMissing(f"python3-jsonschema is not installed ({e}); "
                               "apt-get install python3-jsonschema")
    if not os.path.isfile(schema_path):
        raise ValidatorMissing(f"SARIF schema not found at {schema_path}; {SETUP_HINT}")
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    if cls.__name__ != "Draft202012Validator":
        raise ValidatorMissing(f"jsonschema picked {cls.__name__} for {schema_path}, "
                               "expected Draft202012Validator (jsonschema >= 4.0 needed)")
    cls.check_schema(schema)
    validator = cls(schema)
    problems = []
    for err in sorted(validator.iter_errors(log), key=lambda e: list(map(str, e.absolute_path))):
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
        problems.append(("schema", f"schema: ${where}: {err.message}"))
    return problems


def multitool_levels(out_log):
    """(ruleId, level, message) of every result in the Multitool's own SARIF output."""
    run = out_log["runs"][0]
    rules = run.get("tool", {}).get("driver", {}).get("rules", [])
    found = []
    for r in run.get("results", []):
        level = r.get("level")
        if level is None:
            idx = r.get("ruleIndex")
            if isinstance(idx, int) and 0 <= idx < len(rules):
                level = rules[idx].get("defaultConfiguration", {}).get("level")
        # SARIF's default level is "warning" (§3.27.10).
        found.append((r.get("ruleId", "?"), level or "warning", r))
    return found


def check_multitool(path, schema_path):
    """Returns (errors, warnings), each a list of (rule id, printable line)."""
    exe = os.path.join(tools_dir(), "Sarif.Multitool")
    if not os.access(exe, os.X_OK):
        raise ValidatorMissing(f"Sarif.Multitool not found at {exe}; {SETUP_HINT}")
    env = dict(os.environ)
    env.setdefault("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
    # No libicu needed: the validator compares no culture-specific text.
    env.setdefault("DOTNET_SYSTEM_GLOBALIZATION_INVARIANT", "1")
    with tempfile.TemporaryDirectory(prefix="validate-sarif-") as tmp:
        env.setdefault("DOTNET_BUNDLE_EXTRACT_BASE_DIR", tmp)
        out = os.path.join(tmp, "validation.sarif")
        cmd = [exe, "validate", "--rule-kind", "Sarif;Gh", "--json-schema", schema_path,
               "--output", out, os.path.abspath(path)]
        try:
            proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True, timeout=300)
        except OSError as e:
            raise ValidatorMissing(f"cannot run {exe}: {e}")
        console = [l for l in proc.stdout.splitlines() if l.strip()]
        if proc.returncode != 0 or not os.path.isfile(out):
            raise ValidatorMissing(f"{' '.join(cmd)} failed (exit {proc.returncode}):\n"
                                   + "\n".join(console[-40:]))
        with open(out, encoding="utf-8") as f:
            out_log = json.load(f)

    # The console lines carry the rendered messages, the output log the levels
    # (its messages are only ids and arguments).  Pair them by rule id, in order.
    rendered = {}
    for line in console:
        for marker in (": error ", ": warning ", ": note "):
            if marker in line:
                rule = line.split(marker, 1)[1].split(":", 1)[0].strip()
                rendered.setdefault(rule, []).append(line)
    errors, warnings = [], []
    for rule, level, _ in multitool_levels(out_log):
        text = rendered[rule].pop(0) if rendered.get(rule) else rule
        entry = (rule, f"multitool: {text}")
        if level == "error":
            errors.append(entry)
        elif level == "warning":
            warnings.append(entry)
    for inv in out_log["runs"][0].get("invocations", []):
        notes = inv.get("toolExecutionNotifications", []) + inv.get("toolConfigurationNotifications", [])
        for n in notes:
            if n.get("level", "warning") == "error":
                msg = n.get("message", {}).get("text", json.dumps(n.get("message")))
                errors.append(("validator", f"multitool: validator error: {msg}"))
        if inv.get("executionSuccessful") is False:
            errors.append(("validator", "multitool: validator reports executionSuccessful=false"))
    return errors, warnings


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("--only", choices=["schema", "multitool"],
                    help="run one of the two checks (the tests check each on its own)")
    ap.add_argument("--strict", action="store_true", help="fail on warnings too")
    ap.add_argument("--allow", action="append", default=[], metavar="RULE",
                    help="with --strict, a warning rule id (e.g. SARIF2005) that may stay")
    args = ap.parse_args()

    try:
        with open(args.file, encoding="utf-8") as f:
            log = json.load(f)
    except (OSError, ValueError) as e:
        print(f"validate_sarif: {args.file}: not a JSON file: {e}", file=sys.stderr)
        return 1

    schema_path = os.path.join(tools_dir(), "sarif-2.1.0.json")
    errors, warnings = [], []
    try:
        if args.only in (None, "schema"):
            errors += check_schema(log, schema_path)
        if args.only in (None, "multitool"):
            e, w = check_multitool(args.file, schema_path)
            errors += e
            warnings += w
    except ValidatorMissing as e:
        print(f"validate_sarif: FAIL: validator unavailable: {e}", file=sys.stderr)
        return 2

    for _, line in errors:
        print(f"error: {line}")
    for rule, line in warnings:
        print(f"warning: {line}" + (" (allowed)" if rule in args.allow else ""))
    checks = args.only or "schema+multitool"
    failing_warnings = [w for w in warnings if w[0] not in args.allow]
    if errors or (args.strict and failing_warnings):
        print(f"validate_sarif: {args.file}: INVALID ({checks}): "
              f"{len(errors)} error(s), {len(warnings)} warning(s)")
        return 1
    print(f"validate_sarif: {args.file}: valid ({checks}), {len(warnings)} warning(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

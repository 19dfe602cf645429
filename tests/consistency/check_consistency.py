#!/usr/bin/env python3
"""The catalog (rules/catalog.yaml) is the single source of truth.  This test
fails when the rule files, the checks clang-tidy lists with the plugin, their
options, the docs (docs/checks/) or the tests disagree with it.  It reads the
catalog through the one reader (`ddplint-gen-catalog --json`), never the YAML.
Program rules (`runner: program`, the default) need a rule file
checks/core/rules/<Name>.cpp that defines their RuleDefinition; those for C
or C++ a registered clang-tidy check and lit tests in tests/lit/; those for
Python a test in tests/python/.  Launch rules (`runner: launch`, ddplint
check-launch) must not be registered with clang-tidy and need a test in
tests/launch/ instead.

    check_consistency.py --repo DIR --gen GEN_CATALOG --clang-tidy BIN --plugin SO
                         [--harness BIN]
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
    return p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", required=True)
    ap.add_argument("--gen", required=True)
    ap.add_argument("--clang-tidy", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--harness")
    a = ap.parse_args()
    rules = os.path.join(a.repo, "rules")
    catalog, api = os.path.join(rules, "catalog.yaml"), os.path.join(rules, "api.yaml")
    errors = []

    cat = json.loads(run([a.gen, catalog, api, "--json"]))["rules"]
    ids = [r["id"] for r in cat]
    if not ids:
        sys.exit("error: the catalog lists no rules")
    launch_ids = [r["id"] for r in cat if r["runner"] == "launch"]
    program_ids = [r["id"] for r in cat if r["runner"] == "program"]
    tidy_ids = [r["id"] for r in cat if r["class"]]
    python_ids = [r["id"] for r in cat if "python" in r["languages"]]
    for r in cat:
        if r["runner"] not in ("program", "launch"):
            errors.append(f"{r['id']}: unknown runner {r['runner']}")

    # 0. Rule files: one per program rule, defining its RuleDefinition.
    rule_dir = os.path.join(a.repo, "checks", "core", "rules")
    camel = lambda i: "".join(w.capitalize() for w in i[len("ddp-"):].split("-"))
    defined = {}
    for path in glob.glob(os.path.join(rule_dir, "*.cpp")):
        with open(path, encoding="utf-8") as f:
            for name in re.findall(r"^const RuleDefinition (\w+) =", f.read(), re.M):
                defined[name] = os.path.basename(path)
    for i in program_ids:
        want = camel(i)
        if want not in defined:
            errors.append(f"{i}: no checks/core/rules/{want}.cpp defining `const RuleDefinition {want}`")
        elif defined[want] != want + ".cpp":
            errors.append(f"{i}: its RuleDefinition is in {defined[want]}, not {want}.cpp")
    for name, file in defined.items():
        if name not in {camel(i) for i in program_ids}:
            errors.append(f"checks/core/rules/{file} defines {name}, which is no program rule of the catalog")

    # 1. Registered checks == catalog entries.
    listed = run([a.clang_tidy, f"--load={a.plugin}", "--checks=-*,ddp-*", "--list-checks"])
    registered = sorted(set(re.findall(r"^\s+(ddp-[a-z0-9-]+)\s*$", listed, re.M)))
    for i in tidy_ids:
        if i not in registered:
            errors.append(f"{i}: in rules/catalog.yaml but not registered by the plugin")
    for r in registered:
        if r in ids and r not in tidy_ids:
            errors.append(f"{r}: a rule for neither C nor C++ registered as a clang-tidy check")
        elif r not in ids:
            errors.append(f"{r}: registered by the plugin but missing from rules/catalog.yaml")

    # 2. Options: what the checks store == what the catalog documents.
    dumped = run([a.clang_tidy, f"--load={a.plugin}", "--checks=-*,ddp-*", "--dump-config"])
    stored = dict(re.findall(r"^\s+(ddp-[a-z0-9-]+\.[A-Za-z]+):\s*'?([^'\n]*)'?\s*$", dumped, re.M))
    documented = {f"{r['id']}.{o['name']}": o["default"] for r in cat for o in r["options"]}
    for key, default in documented.items():
        if key.split(".")[0] not in registered:
            continue
        if key not in stored:
            errors.append(f"{key}: documented in the catalog but not stored by the check")
        elif stored[key] != default:
            errors.append(f"{key}: catalog default '{default}' but the check stores '{stored[key]}'")
    for key in stored:
        if key not in documented:
            errors.append(f"{key}: stored by the check but not documented in rules/catalog.yaml")

    # 3. Docs: one page per rule, each option documented, and the generated index.
    docs = os.path.join(a.repo, "docs", "checks")
    pages = {os.path.basename(p)[:-3] for p in glob.glob(os.path.join(docs, "ddp-*.md"))}
    for i in ids:
        if i not in pages:
            errors.append(f"{i}: no docs/checks/{i}.md")
        else:
            with open(os.path.join(docs, i + ".md"), encoding="utf-8") as f:
                page = f.read()
            for key in documented:
                if key.startswith(i + ".") and key.split(".", 1)[1] not in page:
                    errors.append(f"docs/checks/{i}.md does not document option {key.split('.', 1)[1]}")
    for p in pages - set(ids):
        errors.append(f"docs/checks/{p}.md documents a rule that is not in the catalog")
    index = run([a.gen, catalog, api, "--docs-index"])
    index_path = os.path.join(docs, "README.md")
    if not os.path.exists(index_path) or open(index_path, encoding="utf-8").read() != index:
        errors.append("docs/checks/README.md is stale: regenerate it with "
                      "`build/internal/ddplint-gen-catalog rules/catalog.yaml rules/api.yaml "
                      "--docs-index > docs/checks/README.md`")

    # 4. Tests: every clang-tidy rule has a lit test, and one on the real LibTorch
    # headers; every launch rule a test under tests/launch that names it.
    runs = {}
    for t in glob.glob(os.path.join(a.repo, "tests", "lit", "*.cpp")):
        with open(t, encoding="utf-8") as f:
            for line in f:
                m = re.search(r"//\s*RUN:.*%check_ddp_tidy.*?\s(ddp-[a-z0-9-]+)\s", line)
                if m:
                    runs.setdefault(m.group(1), set()).add("real" if "%torch_flags" in line else "mock")
    for i in tidy_ids:
        kinds = runs.get(i, set())
        if not kinds:
            errors.append(f"{i}: no lit test in tests/lit runs it")
        elif "real" not in kinds:
            errors.append(f"{i}: no lit test runs it on the real LibTorch headers (%torch_flags)")
    for r in runs:
        if r in launch_ids:
            errors.append(f"tests/lit runs {r}, a launch rule that clang-tidy does not have")
        elif r not in ids:
            errors.append(f"tests/lit runs {r}, which is not in the catalog")
    launch_dir = os.path.join(a.repo, "tests", "launch")
    launch_sources = []
    for ext in ("cpp", "py"):
        launch_sources += glob.glob(os.path.join(launch_dir, f"*.{ext}"))
    launch_tested = set()
    for t in launch_sources:
        with open(t, encoding="utf-8") as f:
            body = f.read()
        launch_tested |= {i for i in launch_ids if i in body}
    has_cmake = os.path.exists(os.path.join(launch_dir, "CMakeLists.txt"))
    for i in launch_ids:
        if not has_cmake:
            errors.append(f"{i}: launch rule without tests/launch/CMakeLists.txt")
        elif i not in launch_tested:
            errors.append(f"{i}: no test in tests/launch names it")

    # Every rule that applies to Python has a Python lit test (tests/python)
    # with an annotation that expects it.
    py_tested = set()
    for t in glob.glob(os.path.join(a.repo, "tests", "python", "*.py")):
        with open(t, encoding="utf-8") as f:
            py_tested |= set(re.findall(
                r"CHECK-MESSAGES: :\[\[@LINE[-+0-9]*\]\]:\d+:.*\[(ddp-[a-z0-9-]+)\]", f.read()))
    for i in python_ids:
        if i not in py_tested:
            errors.append(f"{i}: applies to python but no tests/python test expects it")
    for r in py_tested:
        if r not in python_ids:
            errors.append(f"tests/python expects {r}, which does not apply to python")

    # 5. Harness: every scenario a rule names exists.
    if a.harness:
        scen = run([a.harness, "list"])
        for r in cat:
            for s in r["harness"]:
                if s not in scen:
                    errors.append(f"{r['id']}: harness scenario '{s}' not listed by ddp-harness list")

    for e in errors:
        print(f"inconsistent: {e}")
    print(f"{len(ids)} rules ({len(program_ids)} program rules, {len(tidy_ids)} clang-tidy checks, "
          f"{len(python_ids)} for Python, {len(launch_ids)} launch), {len(defined)} rule files, "
          f"{len(registered)} registered checks, {len(pages)} docs, "
          f"{len(runs)} checks with lit tests, {len(launch_tested)} launch rules with tests: "
          f"{'OK' if not errors else f'{len(errors)} problem(s)'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The catalog (rules/catalog.yaml) is the single source of truth.  This test
fails when the checks clang-tidy lists with the plugin, their options, the docs
(docs/checks/) or the tests disagree with it.  Rules of the clang-tidy front end
(the default) need a registered check and lit tests in testdata/lit/; rules of
the launch front end (`frontend: launch`, ddplint check-launch) must not be
registered with clang-tidy and need a test in testdata/launch/ instead.

    check_consistency.py --repo DIR --gen GEN_CATALOG --clang-tidy BIN --plugin SO
                         [--harness BIN]
"""
import argparse
import glob
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

    ids = run([a.gen, catalog, api, "--ids"]).split()
    if not ids:
        sys.exit("error: the catalog lists no rules")
    tidy_ids = run([a.gen, catalog, api, "--ids-frontend", "clang-tidy"]).split()
    launch_ids = run([a.gen, catalog, api, "--ids-frontend", "launch"]).split()
    python_only_ids = run([a.gen, catalog, api, "--ids-frontend", "python"]).split()
    python_ids = run([a.gen, catalog, api, "--ids-language", "python"]).split()
    for i in ids:
        if i not in tidy_ids and i not in launch_ids and i not in python_only_ids:
            errors.append(f"{i}: belongs to no known front end")

    # 1. Registered checks == catalog entries.
    listed = run([a.clang_tidy, f"--load={a.plugin}", "--checks=-*,ddp-*", "--list-checks"])
    registered = sorted(set(re.findall(r"^\s+(ddp-[a-z0-9-]+)\s*$", listed, re.M)))
    for i in tidy_ids:
        if i not in registered:
            errors.append(f"{i}: in rules/catalog.yaml but not registered by the plugin")
    for r in registered:
        if r in launch_ids or r in python_only_ids:
            errors.append(f"{r}: a rule of another front end registered as a clang-tidy check")
        elif r not in ids:
            errors.append(f"{r}: registered by the plugin but missing from rules/catalog.yaml")

    # 2. Options: what the checks store == what the catalog documents.
    dumped = run([a.clang_tidy, f"--load={a.plugin}", "--checks=-*,ddp-*", "--dump-config"])
    stored = dict(re.findall(r"^\s+(ddp-[a-z0-9-]+\.[A-Za-z]+):\s*'?([^'\n]*)'?\s*$", dumped, re.M))
    with open(catalog, encoding="utf-8") as f:
        text = f.read()
    documented = {}
    for block in re.split(r"\n  - id: ", text)[1:]:
        rid = block.split()[0]
        opts = re.findall(r"- name: (\w+)\n\s+default: \"([^\"]*)\"", block)
        for name, default in opts:
            documented[f"{rid}.{name}"] = default
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
    # headers; every launch rule a test under testdata/launch that names it.
    runs = {}
    for t in glob.glob(os.path.join(a.repo, "testdata", "lit", "*.cpp")):
        with open(t, encoding="utf-8") as f:
            for line in f:
                m = re.search(r"//\s*RUN:.*%check_ddp_tidy.*?\s(ddp-[a-z0-9-]+)\s", line)
                if m:
                    runs.setdefault(m.group(1), set()).add("real" if "%torch_flags" in line else "mock")
    for i in tidy_ids:
        kinds = runs.get(i, set())
        if not kinds:
            errors.append(f"{i}: no lit test in testdata/lit runs it")
        elif "real" not in kinds:
            errors.append(f"{i}: no lit test runs it on the real LibTorch headers (%torch_flags)")
    for r in runs:
        if r in launch_ids:
            errors.append(f"testdata/lit runs {r}, a launch rule that clang-tidy does not have")
        elif r not in ids:
            errors.append(f"testdata/lit runs {r}, which is not in the catalog")
    launch_dir = os.path.join(a.repo, "testdata", "launch")
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
            errors.append(f"{i}: launch rule without testdata/launch/CMakeLists.txt")
        elif i not in launch_tested:
            errors.append(f"{i}: no test in testdata/launch names it")

    # Every rule that applies to Python has a Python lit test (testdata/python)
    # with an annotation that expects it.
    py_tested = set()
    for t in glob.glob(os.path.join(a.repo, "testdata", "python", "*.py")):
        with open(t, encoding="utf-8") as f:
            py_tested |= set(re.findall(
                r"CHECK-MESSAGES: :\[\[@LINE[-+0-9]*\]\]:\d+:.*\[(ddp-[a-z0-9-]+)\]", f.read()))
    for i in python_ids:
        if i not in py_tested:
            errors.append(f"{i}: applies to python but no testdata/python test expects it")
    for r in py_tested:
        if r not in python_ids:
            errors.append(f"testdata/python expects {r}, which does not apply to python")

    # 5. Harness: every scenario a rule names exists.
    if a.harness:
        scen = run([a.harness, "list"])
        for block in re.split(r"\n  - id: ", text)[1:]:
            rid = block.split()[0]
            m = re.search(r"harness: \[([^\]]*)\]", block)
            for s in (x.strip() for x in (m.group(1).split(",") if m else [])):
                if s and s not in scen:
                    errors.append(f"{rid}: harness scenario '{s}' not listed by ddp-harness list")

    for e in errors:
        print(f"inconsistent: {e}")
    print(f"{len(ids)} rules ({len(tidy_ids)} clang-tidy, {len(launch_ids)} launch), "
          f"{len(registered)} registered checks, {len(pages)} docs, "
          f"{len(runs)} checks with lit tests, {len(launch_tested)} launch rules with tests: "
          f"{'OK' if not errors else f'{len(errors)} problem(s)'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

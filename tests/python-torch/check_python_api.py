"""rules/api.yaml's python.implicit_collectives section against the proof scripts
and the Python frontend's vocabulary.

Fails when
  - an entry lacks a required key, has a malformed or duplicate id, or a
    `proof` that is neither an existing tests/python-torch/implicit_*.py
    nor `unavailable: <reason>`;
  - an `unavailable` proof has no reason, or names an `evidence` file that
    does not exist; an entry with a proof script names evidence as well;
  - a proof script does not use the harness (run_proof), or an evidence file
    is not a python-torch test script;
  - an implicit_*.py or evidence_*.py in tests/python-torch is named by no entry;
  - a library's name in the python lists (deepspeed.comm.barrier, ...) or an
    implicit entry of a library is not called in tests/python/library_knowledge.py
    (a base class of a `*_bases` list may be subclassed there instead);
  - the build's reader rejects the section.

The section is read through the build's reader (ddplint-gen-catalog
--implicit-json), which also rejects unknown keys and a `match` that uses a
kind, condition or placeholder the Python frontend does not know.

Usage: check_python_api.py --gen GEN_CATALOG [--repo ROOT]
"""
import argparse
import glob
import os
import re
import sys

import json
import subprocess

REQUIRED = ("id", "api", "receiver", "collective", "when", "package", "since", "proof")

PROOF_DIR = "tests/python-torch"
LIBRARY_TEST = "tests/python/library_knowledge.py"
LIBRARIES = ("bmtrain", "deepspeed", "detectron2", "flashy", "horovod", "icefall", "megatron",
             "timm", "transformers")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                   "..", ".."))
    ap.add_argument("--gen", required=True, help="ddplint-gen-catalog")
    args = ap.parse_args()
    repo = os.path.abspath(args.repo)
    catalog = os.path.join(repo, "rules", "api.yaml")
    errors = []
    p = subprocess.run([args.gen, os.path.join(repo, "rules", "catalog.yaml"), catalog,
                        "--implicit-json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit("FAIL: the build's reader rejects %s:\n%s" % (catalog, p.stderr))
    entries = json.loads(p.stdout).get("implicit_collectives")
    if not isinstance(entries, list) or not entries:
        sys.exit("FAIL: %s has no implicit_collectives list" % catalog)

    ids = set()
    named_proofs, named_evidence = set(), set()
    for i, e in enumerate(entries):
        where = "implicit_collectives[%d] (%s)" % (i, e.get("id", "?") if isinstance(e, dict) else "?")
        if not isinstance(e, dict):
            errors.append("%s: not a mapping" % where)
            continue
        for key in REQUIRED:
            if key not in e:
                errors.append("%s: missing key '%s'" % (where, key))
        if e.get("evidence") is None:
            e.pop("evidence", None)
        eid = e.get("id")
        if not isinstance(eid, str) or not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", eid):
            errors.append("%s: id is not kebab-case" % where)
        elif eid in ids:
            errors.append("%s: duplicate id" % where)
        ids.add(eid)
        for key in ("api", "receiver", "collective", "when", "package"):
            if key in e and (not isinstance(e[key], str) or not e[key].strip()):
                errors.append("%s: '%s' must be a non-empty string" % (where, key))
        if e.get("since") is not None and not isinstance(e.get("since"), str):
            errors.append("%s: since must be a quoted version string or null" % where)
        proof = e.get("proof")
        if not isinstance(proof, str) or not proof.strip():
            errors.append("%s: proof must be a path or 'unavailable: <reason>'" % where)
            continue
        proof = proof.strip()
        if proof.startswith("unavailable:"):
            reason = proof[len("unavailable:"):].strip()
            if len(reason) < 20:
                errors.append("%s: 'unavailable:' needs the exact reason, got %r" % (where, reason))
            ev = e.get("evidence")
            if ev is not None:
                if not re.fullmatch(re.escape(PROOF_DIR) + r"/evidence_[a-z0-9_]+\.py", ev):
                    errors.append("%s: evidence %r is not %s/evidence_*.py" % (where, ev, PROOF_DIR))
                elif not os.path.isfile(os.path.join(repo, ev)):
                    errors.append("%s: evidence %s does not exist" % (where, ev))
                named_evidence.add(ev)
        else:
            if "evidence" in e:
                errors.append("%s: a proven entry takes no 'evidence'" % where)
            if not re.fullmatch(re.escape(PROOF_DIR) + r"/implicit_[a-z0-9_]+\.py", proof):
                errors.append("%s: proof %r is neither %s/implicit_*.py nor 'unavailable: ...'"
                              % (where, proof, PROOF_DIR))
                continue
            path = os.path.join(repo, proof)
            if not os.path.isfile(path):
                errors.append("%s: proof script %s does not exist" % (where, proof))
                continue
            with open(path, encoding="utf-8") as f:
                text = f.read()
            if "run_proof(" not in text:
                errors.append("%s: %s does not run the two-rank harness (run_proof)" % (where, proof))
            if proof in named_proofs:
                errors.append("%s: proof %s is named by two entries" % (where, proof))
            named_proofs.add(proof)

    for path in sorted(glob.glob(os.path.join(repo, PROOF_DIR, "implicit_*.py"))):
        rel = os.path.relpath(path, repo)
        if rel not in named_proofs:
            errors.append("%s: proof script named by no implicit_collectives entry" % rel)
    for path in sorted(glob.glob(os.path.join(repo, PROOF_DIR, "evidence_*.py"))):
        rel = os.path.relpath(path, repo)
        if rel not in named_evidence:
            errors.append("%s: evidence script named by no entry" % rel)

    # Library knowledge: every name of a library in the python lists, and
    # every implicit entry on a library's object, is exercised by the lit
    # fixture (a call of it under a rank test there, with its finding).
    lib_test = os.path.join(repo, LIBRARY_TEST)
    with open(lib_test, encoding="utf-8") as f:
        lib_text = f.read()
    lists = json.loads(p.stdout).get("lists", {})
    for key, names in sorted(lists.items()):
        for name in names:
            if name.split(".")[0] not in LIBRARIES:
                continue
            pkg, last = name.split(".")[0], name.rsplit(".", 1)[1]
            if not re.search(r"^\s*(import|from)\s+%s\b" % re.escape(pkg), lib_text, re.M):
                errors.append("python.%s: %s: %s does not import %s" % (key, name, LIBRARY_TEST, pkg))
            # A base class (`*_bases`) is exercised by a subclass of it too.
            subclassed = key.endswith("_bases") and re.search(
                r"^\s*class\s+\w+\([^)]*\b%s\b" % re.escape(last), lib_text, re.M)
            if not subclassed and not re.search(r"\b%s\(" % re.escape(last), lib_text):
                errors.append("python.%s: %s: no call of %s in %s" % (key, name, last, LIBRARY_TEST))
    for e in entries:
        if isinstance(e, dict) and e.get("package") in LIBRARIES and e.get("match"):
            for m in e["match"]["call"] if isinstance(e["match"]["call"], list) else []:
                if not re.search(r"\.%s\(" % re.escape(m), lib_text):
                    errors.append("implicit_collectives %s: no call of .%s( in %s"
                                  % (e["id"], m, LIBRARY_TEST))

    unavailable = sum(1 for e in entries if isinstance(e, dict) and isinstance(e.get("proof"), str)
                      and e["proof"].strip().startswith("unavailable:"))
    print("check_python_api: %d implicit_collectives entries, %d with a proof script, %d unavailable"
          % (len(entries), len(entries) - unavailable, unavailable))
    for err in errors:
        print("FAIL: " + err)
    print("check_python_api: %s" % ("ok" if not errors else "FAILED (%d)" % len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

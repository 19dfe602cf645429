#!/usr/bin/env python3
"""Scaffold a new ddplint rule: every file it needs, each with a working start.

    python3 scripts/new-rule.py ddp-<name> [--languages c,c++,python]
                                [--severity error|warning|note] [--harness SCENARIO]
                                [--gen BUILD/internal/ddplint-gen-catalog] [--repo DIR]

Writes (and refuses to overwrite):
  rules/catalog.yaml               the rule's entry (appended), with TODO texts
  checks/core/rules/<Name>.cpp     the rule: its RuleDefinition (what it reads,
                                   how it decides, how it words the finding)
  tests/lit/<name>.cpp             for C or C++: a clang-tidy-style test on the mock
                                   headers and on the real LibTorch headers
  tests/python/<name>.py           for Python: the same in the Python corpus's style
  docs/checks/ddp-<name>.md        the doc page
and regenerates docs/checks/README.md when --gen (or build/internal/
ddplint-gen-catalog) exists.  Nothing else is edited by hand: the rule id,
the clang-tidy check class (<Name>Check), its registration, the registry entry
that both the clang-tidy check and the Python linter dispatch through, and the
docs index all come from the catalog entry.

The rule it writes is a working example to replace: it reports a barrier
issued inside a loop body (a true positive in each test, a barrier after the
loop as the hard negative).  Then build and run `ctest -L consistency` and the
new tests (`ctest -R <name>`).
"""
import argparse
import os
import re
import subprocess
import sys
import textwrap


def camel(rule_id):
    return "".join(w.capitalize() for w in rule_id[len("ddp-"):].split("-"))


CATALOG_ENTRY = """\
  - id: {id}
    severity: {severity}
    languages: [{languages}]
    summary: TODO one line that says what the rule finds.
    trigger: >-
      TODO the code that triggers it (the scaffold's example: a barrier issued
      inside a loop body).
    root_cause: >-
      TODO why it hangs, times out or corrupts state on real ranks.
    guardrail: >-
      TODO what keeps it from happening (a helper, a check, a launcher setting).
    fix: >-
      TODO how to fix the code.
    harness: [{harness}]
    options: []
"""

RULE_FILE = """\
// {id}: TODO one line that says what the rule finds.
//
// The scaffold's example decision (replace it): a barrier issued directly
// inside a loop body.  A rule reads the program model (Model.h: functions as
// trees of events, calls, branches, loops and exits) and the facts
// (Facts.h); with NeedPaths it can ask ctx.paths() for the path engine's
// analysis that the path rules share (engine/PathEngine.h).
#include "RuleSupport.h"

#include <functional>

namespace ddplint::core::rules {{
namespace {{

std::vector<Finding> decide(const RuleContext &ctx) {{
  std::vector<Finding> out;
  std::function<void(const Node &, int)> visit = [&](const Node &n, int loops) {{
    if (n.kind == Node::Kind::Event && n.event == EventKind::Barrier && loops > 0)
      out.push_back(makeFinding("{id}", n.loc,
                                "barrier '" + n.name + "' runs on every iteration of a loop; "
                                "TODO: say what diverges and how to fix it"));
    for (const Node &k : n.kids)
      visit(k, loops + (n.kind == Node::Kind::Loop ? 1 : 0));
  }};
  for (const Function &f : ctx.program().functions)
    visit(f.body, 0);
  sortByLoc(out);
  return out;
}}

}} // namespace

const RuleDefinition {camel} = {{NeedPaths, &decide}};

}} // namespace ddplint::core::rules
"""

LIT_TEST = """\
// RUN: %check_ddp_tidy %s {id} %t -- -- %mock_flags
// RUN: %check_ddp_tidy %s {id} %t-real -- -- %torch_flags
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <vector>

// --- true positive: a barrier inside the loop ---------------------------------

void barrierEveryStep(c10::intrusive_ptr<c10d::ProcessGroup> pg, int steps) {{
  for (int step = 0; step < steps; ++step) {{
    pg->barrier()->wait();
    // CHECK-MESSAGES: :[[@LINE-1]]:9: {severity}: barrier 'barrier' runs on every iteration of a loop{{{{.*}}}} [{id}]
  }}
}}

// --- hard negative: the barrier after the loop ---------------------------------

void barrierAfterLoop(c10::intrusive_ptr<c10d::ProcessGroup> pg, std::vector<at::Tensor> &t,
                      int steps) {{
  for (int step = 0; step < steps; ++step)
    pg->allreduce(t)->wait();
  pg->barrier()->wait();
}}
"""

PY_TEST = '''\
"""{id}: TODO what the rule finds (the scaffold's example: a barrier inside a loop)."""
# CONFIG: checks:
# CONFIG:   "ddp-*": off
# CONFIG:   {id}: {severity}
import torch.distributed as dist


# ---- true positive ----------------------------------------------------------


def barrier_every_step(steps):
    for _ in range(steps):
        dist.barrier()  # CHECK-MESSAGES: :[[@LINE]]:9: {severity}: barrier 'barrier' runs on every iteration of a loop [{id}]


# ---- hard negative ----------------------------------------------------------


def barrier_after_loop(t, steps):
    for _ in range(steps):
        dist.all_reduce(t)
    dist.barrier()
'''

DOC_PAGE = """\
# {id}

TODO: what the rule finds, why it matters on real ranks, and what it does not
flag.

Severity: **{severity}**. Languages: {languages}. Harness scenario: `{harness}`.

## Bad

```python
for _ in range(steps):
    dist.barrier()
```

## Good

```python
for _ in range(steps):
    dist.all_reduce(t)
dist.barrier()
```

## Not flagged

- TODO the hard negatives the tests cover.
"""


def write_new(path, text):
    if os.path.exists(path):
        sys.exit(f"new-rule.py: {path} exists already; not overwriting it")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("id", help="ddp-<kebab-case-name>")
    ap.add_argument("--languages", default="c,c++,python")
    ap.add_argument("--severity", default="warning", choices=("error", "warning", "note"))
    ap.add_argument("--harness", default="rank0-only-collective",
                    help="an existing ddp-harness scenario until the rule has its own")
    ap.add_argument("--gen", help="ddplint-gen-catalog, to regenerate docs/checks/README.md")
    ap.add_argument("--repo", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    a = ap.parse_args()
    repo = os.path.abspath(a.repo)
    rid = a.id
    if not re.fullmatch(r"ddp-[a-z0-9]+(-[a-z0-9]+)*", rid):
        sys.exit("new-rule.py: the id is ddp-<kebab-case-name>, e.g. ddp-barrier-in-loop")
    langs = [l.strip() for l in a.languages.split(",") if l.strip()]
    if not langs or any(l not in ("c", "c++", "python") for l in langs):
        sys.exit("new-rule.py: --languages is a comma-separated subset of c, c++, python")
    catalog = os.path.join(repo, "rules", "catalog.yaml")
    with open(catalog, encoding="utf-8") as f:
        text = f.read()
    if re.search(r"^  - id: " + re.escape(rid) + r"\s*$", text, re.M):
        sys.exit(f"new-rule.py: {rid} is in rules/catalog.yaml already")
    name = camel(rid)
    fmt = dict(id=rid, camel=name, severity=a.severity, harness=a.harness,
               languages=", ".join(langs))

    # The rule and its files first, so a refusal leaves the catalog alone.
    write_new(os.path.join(repo, "checks", "core", "rules", name + ".cpp"), RULE_FILE.format(**fmt))
    if "c" in langs or "c++" in langs:
        write_new(os.path.join(repo, "tests", "lit", rid[len("ddp-"):] + ".cpp"), LIT_TEST.format(**fmt))
    if "python" in langs:
        write_new(os.path.join(repo, "tests", "python", rid[len("ddp-"):].replace("-", "_") + ".py"),
                  PY_TEST.format(**fmt))
    write_new(os.path.join(repo, "docs", "checks", rid + ".md"), DOC_PAGE.format(**fmt))
    with open(catalog, "a", encoding="utf-8") as f:
        f.write(CATALOG_ENTRY.format(**fmt))
    print(f"appended {rid} to rules/catalog.yaml")

    gen = a.gen or os.path.join(repo, "build", "internal", "ddplint-gen-catalog")
    if os.path.exists(gen):
        index = subprocess.run([gen, catalog, os.path.join(repo, "rules", "api.yaml"),
                                "--docs-index"], stdout=subprocess.PIPE, text=True)
        if index.returncode != 0:
            sys.exit("new-rule.py: the generator rejects the catalog (see above)")
        with open(os.path.join(repo, "docs", "checks", "README.md"), "w", encoding="utf-8") as f:
            f.write(index.stdout)
        print("regenerated docs/checks/README.md")
    else:
        print("build first, then regenerate the docs index: build/internal/ddplint-gen-catalog "
              "rules/catalog.yaml rules/api.yaml --docs-index > docs/checks/README.md")
    print(textwrap.dedent(f"""
        Next: replace the example decision in checks/core/rules/{name}.cpp and the
        TODO texts, then build and run:
          ctest --test-dir build -L consistency
          ctest --test-dir build -R '{rid[len("ddp-"):]}'"""))
    return 0


if __name__ == "__main__":
    sys.exit(main())

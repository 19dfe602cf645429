#!/usr/bin/env python3
"""The API catalog (rules/api.yaml) against the real headers.

Reads the installed mpi.h and nccl.h and the c10d ProcessGroup/Backend headers,
extracts every declared function (every public virtual method for c10d), and
fails, listing the names, on any that the catalog neither lists as a collective
or barrier nor classifies as something else (point_to_point, one_sided,
requests, file_io, local, query, exit).  PMPI_X counts as MPI_X and pncclX as
ncclX.  A missing header fails the test: it never skips.

The catalog comes from the generator itself (gen_catalog --api-names), so the
YAML has a single parser.

    check_api_headers.py --repo DIR --gen GEN_CATALOG
                         [--mpi-h FILE] [--nccl-h FILE] [--c10d-dir DIR]
"""
import argparse
import collections
import glob
import os
import re
import shutil
import subprocess
import sys

# Floors: a parser that breaks on a new header layout must not pass by finding nothing.
FLOORS = {"mpi.h": 300, "nccl.h": 30, "c10d": 15}


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
    return p.stdout


def strip_c(text):
    """Comments, string literals, line continuations and preprocessor lines out."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    text = re.sub(r"\\\n", " ", text)
    # Every branch of #if/#else stays: removed MPI-1 names behind a switch are declared too.
    return re.sub(r"^[ \t]*#[^\n]*", " ", text, flags=re.M)


# Annotations that come before or after a declarator and look like calls.
NOT_NAMES = {"__attribute__", "__declspec", "__mpi_interface_deprecated__",
             "__mpi_interface_removed__", "OMPI_DECLSPEC", "decltype", "__asm__", "asm"}


def declared_functions(text, prefixes):
    """Names of the functions declared in a C header (not typedefs, not macros).

    Each declaration is split on ';', '{' and '}'; its declarator is the first
    identifier at parenthesis depth 0 that is followed by '(' (so export macros,
    return types over several lines and trailing attributes do not matter)."""
    names = set()
    for stmt in re.split(r"[;{}]", strip_c(text)):
        s = stmt.strip()
        if not s or re.match(r"typedef\b", s):
            continue
        depth = 0
        for m in re.finditer(r"[()]|\b([A-Za-z_]\w*)\s*(?=\()", s):
            tok = m.group(0)
            if tok == "(":
                depth += 1
            elif tok == ")":
                depth -= 1
            elif depth == 0 and m.group(1) not in NOT_NAMES:
                if m.group(1).startswith(prefixes):
                    names.add(m.group(1))
                break
    return names


def preprocessed_functions(header, prefixes, includes):
    """The same scan on the preprocessor's output: a cross-check of the text scan."""
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        sys.exit("error: no C compiler (cc) to cross-check the header scan")
    cmd = [cc, "-E", "-P", "-x", "c"] + [f"-I{i}" for i in includes] + [header]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"error: preprocessing {header} failed:\n{p.stderr[-2000:]}")
    return declared_functions(p.stdout, prefixes)


def fold(name):
    if name.startswith("PMPI_"):
        return name[1:]
    if name.startswith("pnccl"):
        return name[1:]
    return name


def public_virtual_methods(text, class_name):
    """Public virtual member functions of `class [EXPORT] class_name ... {`."""
    text = strip_c(text)
    m = re.search(r"\bclass\s+(?:\w+\s+)*?" + class_name + r"\b[^;{]*\{", text)
    if not m:
        return None
    # The class body at depth 1 only: nested bodies (methods, nested structs) blanked.
    depth, body, i = 1, [], m.end()
    while i < len(text) and depth > 0:
        c = text[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif depth == 1:
            body.append(c)
        if depth == 1 and c in "{}":
            body.append(";")
        i += 1
    body = "".join(body)
    access, names = "private", set()
    for tok in re.finditer(r"\b(public|protected|private)\s*:|\bvirtual\b([^;()]*?)(~?)(\w+)\s*\(",
                           body):
        if tok.group(1):
            access = tok.group(1)
        elif access == "public" and not tok.group(3) and not tok.group(2).rstrip().endswith("~"):
            names.add(tok.group(4))
    return names


def find_mpi_h(given):
    if given:
        return given
    cands = []
    if shutil.which("mpicc"):
        p = subprocess.run(["mpicc", "--showme:incdirs"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
        cands += [os.path.join(d, "mpi.h") for d in p.stdout.split()]
    cands += ["/usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h", "/usr/include/mpi.h"]
    return next((c for c in cands if os.path.isfile(c)), cands[0] if cands else "mpi.h")


def find_nccl_h(given):
    if given:
        return given
    cands = []
    nvcc = shutil.which("nvcc")
    if nvcc:
        cands.append(os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))),
                                  "include", "nccl.h"))
    cands += ["/usr/local/cuda/include/nccl.h", "/usr/include/nccl.h"]
    cands += sorted(glob.glob("/usr/local/cuda-*/include/nccl.h"), reverse=True)
    return next((c for c in cands if os.path.isfile(c)), cands[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", required=True)
    ap.add_argument("--gen", required=True)
    ap.add_argument("--mpi-h")
    ap.add_argument("--nccl-h")
    ap.add_argument("--c10d-dir", default="/usr/include/torch/csrc/distributed/c10d")
    a = ap.parse_args()
    rules = os.path.join(a.repo, "rules")

    # class -> kind -> names, from the generator.
    catalog = {"function": {}, "method": {}}
    for line in run([a.gen, os.path.join(rules, "catalog.yaml"), os.path.join(rules, "api.yaml"),
                     "--api-names"]).splitlines():
        cls, kind, name = line.split()
        catalog[kind][name] = cls
    if not catalog["function"]:
        sys.exit("error: gen_catalog --api-names listed no functions")

    mpi_h, nccl_h = find_mpi_h(a.mpi_h), find_nccl_h(a.nccl_h)
    c10d = [os.path.join(a.c10d_dir, "ProcessGroup.hpp"), os.path.join(a.c10d_dir, "Backend.hpp")]
    missing = [h for h in [mpi_h, nccl_h] + c10d if not os.path.isfile(h)]
    if missing:
        sys.exit("error: header(s) not found: " + ", ".join(missing) +
                 "\n  mpi.h comes from libopenmpi-dev (scripts/setup.sh), nccl.h from the CUDA "
                 "toolkit next to nvcc, the c10d headers from libtorch-dev; or pass --mpi-h, "
                 "--nccl-h, --c10d-dir")

    errors, report = [], []

    def check(label, path, names, kind, floor):
        if len(names) < floor:
            errors.append(f"{label} ({path}): only {len(names)} {kind}s found, fewer than the "
                          f"floor {floor}: the header scan is broken")
        counts = collections.Counter()
        for n in sorted(names):
            cls = catalog[kind].get(n)
            if cls is None:
                errors.append(f"{label}: {kind} {n} is in no class of rules/api.yaml")
                counts["UNCLASSIFIED"] += 1
            else:
                counts[cls] += 1
        report.append(f"{label}: {len(names)} {kind}s (floor {floor}): " +
                      ", ".join(f"{c} {k}" for k, c in sorted(counts.items(), key=lambda x: -x[1])))

    for label, path, prefixes, includes in [
            ("mpi.h", mpi_h, ("MPI_", "PMPI_"), [os.path.dirname(mpi_h)]),
            ("nccl.h", nccl_h, ("nccl", "pnccl"), [os.path.dirname(nccl_h)])]:
        with open(path, encoding="utf-8", errors="replace") as f:
            raw = declared_functions(f.read(), prefixes)
        pre = preprocessed_functions(path, prefixes, includes)
        lost = sorted(pre - raw)
        if lost:
            errors.append(f"{label}: the text scan missed functions that the preprocessor "
                          f"sees: {' '.join(lost)}")
        names = {fold(n) for n in raw}
        report.append(f"{label} ({path}): {len(raw)} declarations, {len(names)} functions "
                      f"after folding P-twins; preprocessed cross-check: {len(pre)} declarations")
        check(label, path, names, "function", FLOORS[label])
        prefix = "MPI_" if label == "mpi.h" else "nccl"
        extra = sorted(n for n, c in catalog["function"].items()
                       if n.startswith(prefix) and n not in names)
        if extra:
            report.append(f"{label}: {len(extra)} catalog names not declared here (newer MPI/NCCL "
                          f"or macros, e.g. {' '.join(extra[:4])})")

    methods = set()
    for path, cls in zip(c10d, ["ProcessGroup", "Backend"]):
        with open(path, encoding="utf-8", errors="replace") as f:
            found = public_virtual_methods(f.read(), cls)
        if found is None:
            errors.append(f"{path}: class {cls} not found")
            continue
        report.append(f"c10d {cls} ({path}): {len(found)} public virtual methods")
        methods |= found
    check("c10d", a.c10d_dir, methods, "method", FLOORS["c10d"])

    print("\n".join(report))
    if errors:
        print(f"\n{len(errors)} error(s):", file=sys.stderr)
        print("\n".join("  " + e for e in errors), file=sys.stderr)
        return 1
    print("ok: every declared function and c10d method is classified by rules/api.yaml")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# Writes what ddplint reports on every corpus it is tested on, as normalised
# JSON, so that a refactoring can show that nothing changed for users:
#
#   scripts/report-snapshot.sh OUT [--corpus DIR] [--ddplint PATH]
#   diff -r BEFORE AFTER        # empty: the same findings, messages, notes, fix-its
#
# OUT gets one file per corpus: findings (rule, severity, message, position,
# notes, fix-its), tool errors and skipped files, with paths made relative to
# their corpus and the summary's counts; timings and versions are left out,
# and so are baseline fingerprints (they hash the path from the enclosing git
# checkout, which a moved test corpus changes; what they hash is compared).
#   example.json        examples/trainer: train.cpp, model.cpp (its CMake
#                       database, real LibTorch) and train.py
#   lit-cxx.json        tests/lit C++ programs on the mock headers
#   lit-real.json       tests/lit programs on the real LibTorch headers
#   lit-c.json          tests/lit C programs on the real mpi.h and nccl.h
#   python-lit.json     tests/python/*.py
#   launch.json         check-launch on tests/launch/fixtures
#   cli-project.json    tests/cli/project (mock headers)
# With --corpus DIR (the fetched public code, see docs/real-world.md):
#   real-world-cxx/     scripts/real-world.sh DIR/cxx: one report per file and torch mode
#   real-world-python/  scripts/real-world-python.sh DIR/py: one report per project
#   real-world-launch/  check-launch on every launch file under DIR/launch/<project>
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out=""
corpus=""
ddplint="${DDPLINT:-$here/build/bin/ddplint}"
while [ $# -gt 0 ]; do
  case "$1" in
    --corpus) corpus=$2; shift 2 ;;
    --ddplint) ddplint=$2; shift 2 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) out=$1; shift ;;
  esac
done
[ -n "$out" ] || { echo "usage: scripts/report-snapshot.sh OUT [--corpus DIR] [--ddplint PATH]" >&2; exit 2; }
[ -x "$ddplint" ] || { echo "report-snapshot.sh: no ddplint at $ddplint" >&2; exit 2; }
ddplint="$(cd "$(dirname "$ddplint")" && pwd)/$(basename "$ddplint")"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
tests="$here/tests"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cache="$tmp/cache"

# normalise RAW BASE > OUT: paths relative to BASE, no timings or versions.
normalise() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, os, sys
raw, base = sys.argv[1], os.path.realpath(sys.argv[2])
try:
    d = json.load(open(raw))
except Exception as e:  # a report that is not JSON is itself a difference
    print(json.dumps({"unreadable": str(e), "text": open(raw, errors="replace").read()[-2000:]}))
    sys.exit(0)
def rel(p):
    if isinstance(p, str) and os.path.isabs(p):
        r = os.path.relpath(os.path.realpath(p), base)
        return r
    return p
def walk(x):
    if isinstance(x, dict):
        return {k: (rel(v) if k in ("file", "path") else walk(v)) for k, v in x.items()
                if k not in ("seconds", "version", "tool", "elapsed", "fingerprint")}
    if isinstance(x, list):
        return [walk(v) for v in x]
    return x
d = walk(d)
for key in ("findings", "errors", "toolErrors", "skipped", "analysisLimits"):
    if isinstance(d.get(key), list):
        d[key] = sorted(d[key], key=lambda f: json.dumps(f, sort_keys=True))
print(json.dumps(d, indent=1, sort_keys=True))
PY
}

lint() { # name base args...
  local name=$1 base=$2
  shift 2
  (cd "$base" && "$ddplint" --format json --fail-on never -q --cache-dir "$cache" "$@" \
     >"$tmp/$name.raw" 2>"$tmp/$name.err") || true
  normalise "$tmp/$name.raw" "$base" >"$out/$name.json"
}

mpi=$(mpicc --showme:incdirs 2>/dev/null | cut -d' ' -f1 || true)
cuda_inc=/usr/local/cuda/include
[ -f "$cuda_inc/nccl.h" ] || cuda_inc=$(dirname "$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")")/include
torch_flags=(-std=c++17 -isystem /usr/include/torch/csrc/api/include -D_GLIBCXX_USE_CXX11_ABI=1 -DUSE_C10D_GLOO)

# The example, as scripts/run-example.sh runs it.
ex="$tmp/example"
cp -r "$here/examples/trainer" "$ex"
rm -rf "$ex/build"
cmake -S "$ex" -B "$ex/build" -G Ninja >/dev/null 2>&1
lint example "$ex" -p "$ex/build" train.cpp model.cpp train.py

lit="$tests/lit"
mapfile -t mock < <(grep -L '%torch_flags' "$lit"/*.cpp)
mapfile -t real < <(grep -l '%torch_flags' "$lit"/*.cpp)
lint lit-cxx "$lit" "${mock[@]}" -- -std=c++17 -isystem "$tests/mock-headers"
lint lit-real "$lit" "${real[@]}" -- "${torch_flags[@]}"
lint lit-c "$lit" "$lit"/*.c -- -xc -std=c11 "-I$mpi" "-I$cuda_inc"
lint python-lit "$tests/python" "$tests"/python/*.py
lint cli-project "$tests/cli/project" src/train.cpp src/eval.cpp src/clean.cpp -- -std=c++17 \
  -isystem "$tests/mock-headers"
(cd "$tests/launch/fixtures" && "$ddplint" check-launch --format json --fail-on never -q ./* \
   >"$tmp/launch.raw" 2>/dev/null) || true
normalise "$tmp/launch.raw" "$tests/launch/fixtures" >"$out/launch.json"

if [ -n "$corpus" ]; then
  corpus="$(cd "$corpus" && pwd)"
  if [ -d "$corpus/cxx" ]; then
    bash "$here/scripts/real-world.sh" "$corpus/cxx" --ddplint "$ddplint" -o "$tmp/rw-cxx" \
      >/dev/null 2>&1 || true
    mkdir -p "$out/real-world-cxx"
    for f in "$tmp"/rw-cxx/json/*.json; do
      normalise "$f" "$corpus/cxx" >"$out/real-world-cxx/$(basename "$f")"
    done
  fi
  if [ -d "$corpus/py" ]; then
    bash "$here/scripts/real-world-python.sh" "$corpus/py" --ddplint "$ddplint" -o "$tmp/rw-py" \
      >/dev/null 2>&1 || true
    mkdir -p "$out/real-world-python"
    for f in "$tmp"/rw-py/json/*.json; do
      n=$(basename "$f" .json)
      normalise "$f" "$corpus/py/$n" >"$out/real-world-python/$n.json"
    done
  fi
  if [ -d "$corpus/launch" ]; then
    mkdir -p "$out/real-world-launch"
    for d in "$corpus"/launch/*/; do
      n=$(basename "$d")
      mapfile -d '' files < <(find "$d" -type f \( -name '*.yaml' -o -name '*.yml' -o -name '*.sh' \
        -o -name '*.slurm' -o -name '*.sbatch' \) -not -path '*/.github/*' -print0 | sort -z)
      [ ${#files[@]} -eq 0 ] && continue
      "$ddplint" check-launch --format json --fail-on never -q "${files[@]}" >"$tmp/l-$n.raw" \
        2>/dev/null || true
      normalise "$tmp/l-$n.raw" "$d" >"$out/real-world-launch/$n.json"
    done
  fi
fi
echo "report-snapshot: $(find "$out" -name '*.json' | wc -l) reports in $out"

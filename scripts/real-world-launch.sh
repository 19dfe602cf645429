#!/bin/bash
# Reproduces the "Launch files" table of docs/real-world.md: runs
# `ddplint check-launch` on every launch file (*.yaml, *.yml, *.sh, *.slurm,
# *.sbatch; .github/ excluded) of each project folder under CORPUS and prints
# files, hazard warnings, policy notes, tool errors and seconds per project.
#
#   bash scripts/real-world-launch.sh /tmp/corpus [ddplint] [--torch-version 1.13]
#
# CORPUS holds one folder per project, e.g. extracted with
#   git --git-dir=<mirror> archive HEAD | tar -x -C CORPUS/<owner+name>
# The fetched sources are never committed.  JSON output per project lands in
# $OUT (default /tmp/real-world-launch) for triage.
set -u
CORPUS=${1:?usage: real-world-launch.sh CORPUS [DDPLINT] [check-launch options...]}
DDPLINT=${2:-build/bin/ddplint}
shift $(( $# >= 2 ? 2 : 1 ))
OUT=${OUT:-/tmp/real-world-launch}
mkdir -p "$OUT"
printf '| project | files | warnings (hazard) | notes (policy) | errors (exit 2) | time (s) |\n|---|---|---|---|---|---|\n'
for dir in "$CORPUS"/*/; do
  name=$(basename "$dir")
  mapfile -d '' files < <(find "$dir" -type f \( -name '*.yaml' -o -name '*.yml' -o -name '*.sh' \
    -o -name '*.slurm' -o -name '*.sbatch' \) -not -path '*/.github/*' -print0)
  [ ${#files[@]} -eq 0 ] && continue
  start=$(date +%s.%N)
  "$DDPLINT" check-launch --format json --fail-on never -q "$@" "${files[@]}" > "$OUT/$name.json" 2>/dev/null
  end=$(date +%s.%N)
  python3 - "$OUT/$name.json" "$name" "${#files[@]}" "$(echo "$end - $start" | bc)" <<'PY'
import json, sys
path, name, nfiles, secs = sys.argv[1:]
d = json.load(open(path))
w = sum(f["severity"] == "warning" for f in d["findings"])
n = sum(f["severity"] == "note" for f in d["findings"])
print(f"| {name} | {nfiles} | {w} | {n} | {len(d['toolErrors'])} | {float(secs):.1f} |")
PY
done

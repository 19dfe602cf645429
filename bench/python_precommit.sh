#!/usr/bin/env bash
# What a pre-commit hook costs on Python: ddplint on one file of a project,
# with the modules it imports and, for a module that writes checkpoints, the
# project's files that import it (their guards decide who calls it).
#
# Usage:
#   bench/python_precommit.sh PROJECT_DIR FILE [FILE...] [-n RUNS] [--ddplint PATH]
#
# FILE is relative to PROJECT_DIR (the hook runs there).  Per file, alternating
# RUNS rounds of:
#   no-cache  ddplint --no-cache FILE        every importer built again
#   cold      ddplint --cache-dir NEW FILE   a fresh cache folder: the first run
#   warm      ddplint --cache-dir KEPT FILE  the stored callers' calls reused
# and prints the median wall time and peak RSS of each.  The findings of the
# three must be the same, or the benchmark fails.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runs=5
ddplint="${DDPLINT:-$here/build/bin/ddplint}"
project=""
files=()
while [ $# -gt 0 ]; do
  case "$1" in
    -n) runs=$2; shift 2 ;;
    --ddplint) ddplint=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    -*) echo "python_precommit.sh: unknown option '$1'" >&2; exit 2 ;;
    *) if [ -z "$project" ]; then project=$1; else files+=("$1"); fi; shift ;;
  esac
done
[ -n "$project" ] && [ ${#files[@]} -gt 0 ] ||
  { echo "usage: bench/python_precommit.sh PROJECT_DIR FILE [FILE...] [-n RUNS]" >&2; exit 2; }
[ -x "$ddplint" ] && [ -x /usr/bin/time ] ||
  { echo "python_precommit.sh: needs $ddplint and /usr/bin/time" >&2; exit 2; }
tmp=$(mktemp -d /tmp/ddplint-precommit.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$project" || exit 2

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

printf '%-60s %10s %10s %10s %8s\n' file no-cache cold warm "RSS(MiB)"
status=0
for f in "${files[@]}"; do
  [ -f "$f" ] || { echo "python_precommit.sh: $project/$f is missing" >&2; exit 2; }
  "$ddplint" -q --no-cache --format json "$f" >/dev/null 2>&1 # binary and files in the page cache
  for i in $(seq "$runs"); do
    /usr/bin/time -f "%e %M" -o "$tmp/t" "$ddplint" -q --no-cache --format json -o "$tmp/nocache.json" "$f" 2>/dev/null
    cat "$tmp/t" >> "$tmp/nocache.times"
    rm -rf "$tmp/cold"
    /usr/bin/time -f "%e %M" -o "$tmp/t" "$ddplint" -q --cache-dir "$tmp/cold" --format json -o "$tmp/cold.json" "$f" 2>/dev/null
    cat "$tmp/t" >> "$tmp/cold.times"
    [ -d "$tmp/kept" ] || "$ddplint" -q --cache-dir "$tmp/kept" --format json "$f" >/dev/null 2>&1
    /usr/bin/time -f "%e %M" -o "$tmp/t" "$ddplint" -q --cache-dir "$tmp/kept" --format json -o "$tmp/warm.json" "$f" 2>/dev/null
    cat "$tmp/t" >> "$tmp/warm.times"
    for side in cold warm; do
      if ! /usr/bin/python3 - "$tmp/nocache.json" "$tmp/$side.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
key = lambda d: sorted((f["file"], f["line"], f["rule"]) for f in d["findings"])
sys.exit(0 if key(a) == key(b) else 1)
PY
      then echo "python_precommit.sh: $f: the $side run's findings differ from --no-cache's" >&2; status=1; fi
    done
  done
  rss=$(awk '{print $2}' "$tmp/warm.times" | median)
  printf '%-60s %9.2fs %9.2fs %9.2fs %8d\n' "$f" \
    "$(awk '{print $1}' "$tmp/nocache.times" | median)" \
    "$(awk '{print $1}' "$tmp/cold.times" | median)" \
    "$(awk '{print $1}' "$tmp/warm.times" | median)" "$((${rss%.*} / 1024))"
  rm -f "$tmp"/*.times; rm -rf "$tmp/kept"
done
exit $status

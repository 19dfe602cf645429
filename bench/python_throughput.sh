#!/usr/bin/env bash
# Throughput of ddplint's Python frontend against CPython's own compiler on the
# same real Python files, in one run.
#
# Usage:
#   bench/python_throughput.sh CORPUS_DIR [-n RUNS] [--list FILE] [--all] [--ddplint PATH]
#
# Files: those of scripts/real-world-python/repos.tsv under CORPUS_DIR/<name>/
# (extract them with scripts/real-world-python.sh CORPUS_DIR --extract /work/.mirror),
# or with --all every .py file under CORPUS_DIR.  At least 100,000 lines are
# required; the exact line count (wc -l) and byte count are printed.
#
# The two sides, each one process over the whole list, in the same list order:
#   (a) ddplint: build/bin/ddplint --jobs 1 --format json -q -o TMP/report.json FILES...
#   (c) the same with --jobs $(nproc), as a user runs it (the default is one job per core)
#   (b) CPython: /usr/bin/python3 (Debian's 3.11) running py_compile.compile(f,
#       cfile=TMP/pyc/<n>.pyc, doraise=False) for every file: read, parse, compile
#       to bytecode, write the .pyc into a fresh temporary folder.  py_compile, not
#       compileall: compileall skips files whose .pyc is up to date, py_compile
#       always compiles, and the fresh folder means no .pyc is reused or written
#       into the corpus.  A file this Python cannot compile (newer syntax) is
#       counted and still costs its read and parse.
# Fairness: before timing, every file is read once (page cache warm for both
# sides alike) and each side runs once untimed (its binary and libraries in the
# cache); then RUNS rounds alternate a, c, b, each under /usr/bin/time -v (wall,
# user+sys CPU, peak RSS).  Medians are reported; lines/s from wall and from CPU
# (CPU is the steadier measure on a shared, loaded machine).  ddplint's report
# must show every file analysed and no tool error, or the benchmark fails: a
# throughput of files it did not lint means nothing.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpus=""
runs=3
list="$here/scripts/real-world-python/repos.tsv"
all=0
ddplint="${DDPLINT:-$here/build/bin/ddplint}"
PY=/usr/bin/python3
TIME=/usr/bin/time

while [ $# -gt 0 ]; do
  case "$1" in
    -n) runs=$2; shift 2 ;;
    --list) list=$2; shift 2 ;;
    --all) all=1; shift ;;
    --ddplint) ddplint=$2; shift 2 ;;
    -h|--help) sed -n '2,29p' "$0"; exit 0 ;;
    -*) echo "python_throughput.sh: unknown option '$1'" >&2; exit 2 ;;
    *) corpus=$1; shift ;;
  esac
done
[ -n "$corpus" ] || { echo "usage: bench/python_throughput.sh CORPUS_DIR [-n RUNS] [--all]" >&2; exit 2; }
for tool in "$ddplint" "$PY" "$TIME"; do
  [ -x "$tool" ] || { echo "python_throughput.sh: $tool is missing (build/bin/ddplint; apt-get install python3 time)" >&2; exit 2; }
done
corpus=$(cd "$corpus" && pwd)
tmp=$(mktemp -d /tmp/ddplint-pybench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

if [ "$all" = 1 ]; then
  find "$corpus" -name '*.py' -type f | LC_ALL=C sort > "$tmp/files"
  what="every .py file under $corpus"
else
  grep -v '^#' "$list" | awk -F'\t' -v c="$corpus" '{print c "/" $1 "/" $4}' > "$tmp/files"
  what="the files of $(basename "$list") under $corpus"
fi
missing=0
while IFS= read -r f; do [ -f "$f" ] || missing=$((missing+1)); done < "$tmp/files"
if [ "$missing" -gt 0 ]; then
  echo "python_throughput.sh: $missing files of the list are missing under $corpus" \
       "(scripts/real-world-python.sh $corpus --extract /work/.mirror)" >&2
  exit 2
fi
mapfile -t files < "$tmp/files"
nfiles=${#files[@]}
lines=$(cat "${files[@]}" | wc -l)
bytes=$(cat "${files[@]}" | wc -c)
if [ "$lines" -lt 100000 ]; then
  echo "python_throughput.sh: only $lines lines in $nfiles files; at least 100000 are required" >&2
  exit 2
fi

# Time a copy, so that a rebuild during the run cannot swap the binary.
cp -p "$ddplint" "$tmp/ddplint"
ddplint_src=$ddplint
ddplint="$tmp/ddplint"

cat > "$tmp/pycompile.py" <<'EOF'
import os, py_compile, sys
files, outdir = sys.argv[1], sys.argv[2]
failed = 0
with open(files) as fh:
    for n, f in enumerate(l.rstrip("\n") for l in fh):
        try:
            py_compile.compile(f, cfile=os.path.join(outdir, "%d.pyc" % n), doraise=True)
        except py_compile.PyCompileError:
            failed += 1
print(failed)
EOF

run_ddplint() {  # $1: tag, $2: jobs
  rm -f "$tmp/report.json"
  "$TIME" -v -o "$tmp/time.$1" "$ddplint" --jobs "${2:-1}" --format json -q -o "$tmp/report.json" \
    "${files[@]}" > /dev/null 2> "$tmp/err.$1"
  echo $? > "$tmp/rc.$1"
}
run_python() {  # $1: tag
  rm -rf "$tmp/pyc"; mkdir "$tmp/pyc"
  "$TIME" -v -o "$tmp/time.$1" "$PY" "$tmp/pycompile.py" "$tmp/files" "$tmp/pyc" \
    > "$tmp/out.$1" 2> "$tmp/err.$1"
  echo $? > "$tmp/rc.$1"
}
measure() {  # file -> "wall cpu rss_kib"
  awk -F': ' '
    /Elapsed \(wall clock\)/ { n = split($2, p, ":"); w = 0; for (i = 1; i <= n; i++) w = w * 60 + p[i] }
    /User time/ { u = $2 } /System time/ { s = $2 } /Maximum resident set size/ { r = $2 }
    END { printf "%.3f %.3f %d\n", w, u + s, r }' "$1"
}

echo "# ddplint Python frontend vs CPython py_compile"
echo
echo "corpus: $what: $nfiles files, $lines lines (wc -l), $bytes bytes"
echo "ddplint: $ddplint_src ($("$ddplint" --version 2>/dev/null | head -1 || true), built $(date -u -r "$ddplint" +%Y-%m-%dT%H:%MZ), timed as a copy in a temp folder)"
echo "python: $PY ($("$PY" --version 2>&1)), py_compile per file into a fresh temp folder, one process"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at start; $runs timed rounds; $(date -u +%Y-%m-%dT%H:%MZ)"
echo

cat "${files[@]}" > /dev/null            # page cache: warm for both sides
run_ddplint warma
run_python warmb
if ! "$PY" - "$tmp/report.json" "$nfiles" <<'EOF'
import json, sys
rep, n = json.load(open(sys.argv[1])), int(sys.argv[2])
s = rep["summary"]
bad = s.get("filesAnalyzed") != n or s.get("toolErrors", 0) or rep.get("toolErrors")
print("ddplint report: %d of %d files analysed, %d skipped, %d tool errors, %d findings" % (
    s.get("filesAnalyzed", 0), n, s.get("filesSkipped", 0), s.get("toolErrors", 0), s.get("findings", 0)))
for e in rep.get("toolErrors", [])[:5]:
    print("  tool error: %s: %s" % (e.get("file"), e.get("message")))
sys.exit(1 if bad else 0)
EOF
then
  echo "python_throughput.sh: ddplint did not analyse every file cleanly (rc $(cat "$tmp/rc.warma")); no throughput reported" >&2
  head -5 "$tmp/err.warma" >&2
  exit 1
fi
echo "py_compile: $(cat "$tmp/out.warmb") of $nfiles files do not compile with $("$PY" --version 2>&1) (newer syntax); their read and parse still count"
echo

: > "$tmp/a"; : > "$tmp/b"; : > "$tmp/c"
for i in $(seq 1 "$runs"); do
  run_ddplint "a$i" 1; measure "$tmp/time.a$i" >> "$tmp/a"
  run_ddplint "c$i" "$(nproc)"; measure "$tmp/time.c$i" >> "$tmp/c"
  case "$(cat "$tmp/rc.c$i")" in 0|1) ;; *) echo "python_throughput.sh: ddplint run $i (jobs $(nproc)) exited $(cat "$tmp/rc.c$i")" >&2; exit 1 ;; esac
  run_python "b$i";  measure "$tmp/time.b$i" >> "$tmp/b"
  [ "$(cat "$tmp/rc.b$i")" = 0 ] || { echo "python_throughput.sh: py_compile run failed" >&2; cat "$tmp/err.b$i" >&2; exit 1; }
  case "$(cat "$tmp/rc.a$i")" in 0|1) ;; *) echo "python_throughput.sh: ddplint run $i exited $(cat "$tmp/rc.a$i")" >&2; exit 1 ;; esac
done

"$PY" - "$tmp/a" "$tmp/b" "$lines" "$tmp/c" "$(nproc)" <<'EOF'
import statistics, sys
a = [list(map(float, l.split())) for l in open(sys.argv[1])]
b = [list(map(float, l.split())) for l in open(sys.argv[2])]
c = [list(map(float, l.split())) for l in open(sys.argv[4])]
lines, cores = int(sys.argv[3]), int(sys.argv[5])
def med(rows, i): return statistics.median(r[i] for r in rows)
print("| side | runs | median wall (s) | min-max wall (s) | median CPU user+sys (s) | lines/s (wall) | lines/s (CPU) | median peak RSS (MiB) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
res = {}
for name, rows in (("(a) ddplint --jobs 1 --format json", a), ("(b) python3 py_compile", b),
                   ("(c) ddplint --jobs %d (the default: one per core)" % cores, c)):
    w, c, r = med(rows, 0), med(rows, 1), med(rows, 2) / 1024
    res[name] = (w, c)
    print("| %s | %d | %.2f | %.2f-%.2f | %.2f | %.0f | %.0f | %.0f |" % (
        name, len(rows), w, min(x[0] for x in rows), max(x[0] for x in rows), c,
        lines / w if w else float("inf"), lines / c if c else float("inf"), r))
(wa, ca), (wb, cb), (wc, cc) = res.values()
print()
print("ratio ddplint --jobs 1 / py_compile: %.2fx the wall time, %.2fx the CPU time" % (wa / wb, ca / cb))
print("ratio ddplint default jobs / py_compile: %.2fx the wall time, %.2fx the CPU time" % (wc / wb, cc / cb))
EOF

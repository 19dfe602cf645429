#!/usr/bin/env bash
# MPI Bugs Initiative (MBI) call-order evaluation of ddplint's
# ddp-divergent-collective check (issue 8: ">= 570 of 576 bugs found at the
# bug's line, 0 of 648 correct codes flagged, one report per bug").
#
# Usage:
#   MBI_DIR=/tmp/mbi/gencodes scripts/mbi-eval.sh [options]
#
# Options:
#   --generate SRC   first generate the MBI codes into $MBI_DIR from an MBI
#                    checkout SRC (SRC/scripts/generators/*Generator.py, run with
#                    /usr/bin/python3, stdlib only, as MBI.py -c generate does)
#   --cxx            compile the codes as C++ (-xc++ -std=c++17) instead of C
#                    (-xc -std=c11, the default: they are C)
#   --ddplint PATH   the ddplint binary (default: $DDPLINT, else build/bin/ddplint
#                    of this checkout)
#   -j N             parallel ddplint processes (default 2)
#   -o DIR           output folder (default: /tmp/ddplint-mbi-<c|cxx>); holds
#                    results.tsv (one row per code), summary.txt and json/
#   --limit N        only the first N codes of each kind (smoke test)
#   --timeout S      per-file timeout in seconds (default 120)
#
# Selection (documented in docs/real-world.md, "MPI Bugs Initiative"):
#   bugs (576):    CallOrdering_<C1>_<C2|none>_nok.c  with "| ERROR: CallMatching"
#   correct (648): CallOrdering_<C1>[_<C2|none>]_ok.c with "| OK"          (624)
#                  ParamMatching_Com_<C1>_ok.c        with "| OK"          (24)
#   where C1, C2 range over MBI's 24 collectives (generator_utils.coll, icoll,
#   ibarrier).  These are exactly the codes of CollMatchingGenerator.py plus the
#   correct codes of CollComGenerator.py.
#
# A bug is "found at its line" when a ddp-divergent-collective finding's line
# carries an MBIERROR marker comment (/* MBIERROR */, /* MBIERROR1 */,
# /* MBIERROR2 */): the first mismatching collective of either branch.
# Diagnostics per bug = ddp-divergent-collective findings in bug codes / bugs
# found anywhere in the file.  A correct code is "flagged" when it gets any
# finding of any ddp-* check.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mode=c
gen_src=""
jobs=2
limit=0
timeout_s=120
out=""
ddplint="${DDPLINT:-$here/build/bin/ddplint}"

while [ $# -gt 0 ]; do
  case "$1" in
    --generate) gen_src=$2; shift 2 ;;
    --cxx) mode=cxx; shift ;;
    --c) mode=c; shift ;;
    --ddplint) ddplint=$2; shift 2 ;;
    -j) jobs=$2; shift 2 ;;
    -j*) jobs=${1#-j}; shift ;;
    -o) out=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    -h|--help) sed -n '2,40p' "$0"; exit 0 ;;
    *) echo "mbi-eval.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

: "${MBI_DIR:?set MBI_DIR to the folder of generated MBI codes (or to where --generate should write them)}"
[ -n "$out" ] || out=/tmp/ddplint-mbi-$mode

if [ -n "$gen_src" ]; then
  [ -d "$gen_src/scripts/generators" ] || { echo "mbi-eval.sh: no $gen_src/scripts/generators" >&2; exit 2; }
  mkdir -p "$MBI_DIR"
  gen_abs=$(cd "$gen_src" && pwd)
  (cd "$MBI_DIR" && for g in "$gen_abs"/scripts/generators/*Generator.py; do
     /usr/bin/python3 "$g" >/dev/null || { echo "mbi-eval.sh: generator $g failed" >&2; exit 2; }
   done)
fi
[ -d "$MBI_DIR" ] || { echo "mbi-eval.sh: MBI_DIR '$MBI_DIR' is not a folder" >&2; exit 2; }
MBI_DIR=$(cd "$MBI_DIR" && pwd)
[ -x "$ddplint" ] || { echo "mbi-eval.sh: no ddplint binary at '$ddplint' (build it, or pass --ddplint)" >&2; exit 2; }
ddplint=$(cd "$(dirname "$ddplint")" && pwd)/$(basename "$ddplint")

command -v mpicc >/dev/null || { echo "mbi-eval.sh: mpicc not found: apt-get install libopenmpi-dev" >&2; exit 2; }
mpi_inc=()
for d in $(mpicc --showme:incdirs); do mpi_inc+=("-I$d"); done

if [ "$mode" = c ]; then lang=(-xc -std=c11); else lang=(-xc++ -std=c++17); fi

rm -rf "$out"; mkdir -p "$out/json" "$out/meta"

# --- selection --------------------------------------------------------------
C='(Barrier|Bcast|Reduce|Gather|Scatter|Scan|Exscan|Allgather|Allreduce|Allgatherv|Alltoall|Alltoallv|Ibarrier|Ibcast|Ireduce|Igather|Iscatter|Iscan|Iexscan|Iallgather|Iallreduce|Iallgatherv|Ialltoall|Ialltoallv)'
(cd "$MBI_DIR" && ls -1 | LC_ALL=C sort) > "$out/all-files.txt"
grep -E "^CallOrdering_${C}_(${C}|none)_nok\.c$" "$out/all-files.txt" | while read -r f; do
  grep -q '| ERROR: CallMatching' "$MBI_DIR/$f" && printf 'bug\tCallOrdering\t%s\n' "$f"
done > "$out/selection.tsv" || true
grep -E "^CallOrdering_${C}(_(${C}|none))?_ok\.c$" "$out/all-files.txt" | while read -r f; do
  grep -qE '^ *\| OK' "$MBI_DIR/$f" && printf 'ok\tCallOrdering\t%s\n' "$f"
done >> "$out/selection.tsv" || true
grep -E "^ParamMatching_Com_${C}_ok\.c$" "$out/all-files.txt" | while read -r f; do
  grep -qE '^ *\| OK' "$MBI_DIR/$f" && printf 'ok\tParamMatching_Com\t%s\n' "$f"
done >> "$out/selection.tsv" || true
if [ "$limit" -gt 0 ]; then
  { grep -P '^bug\t' "$out/selection.tsv" | head -n "$limit"
    grep -P '^ok\tCallOrdering\t' "$out/selection.tsv" | head -n "$limit"
    grep -P '^ok\tParamMatching_Com\t' "$out/selection.tsv" | head -n "$limit"; } > "$out/sel.tmp" || true
  mv "$out/sel.tmp" "$out/selection.tsv"
fi
nbug=$(grep -cP '^bug\t' "$out/selection.tsv" || true)
nok=$(grep -cP '^ok\t' "$out/selection.tsv" || true)
echo "mbi-eval: $nbug bug codes, $nok correct codes selected from $MBI_DIR (mode $mode)" >&2
if [ "$limit" -eq 0 ] && { [ "$nbug" -ne 576 ] || [ "$nok" -ne 648 ]; }; then
  echo "mbi-eval: WARNING: expected 576 bugs and 648 correct codes; is MBI_DIR a complete generation?" >&2
fi

# --- one ddplint run per code -----------------------------------------------
export DDPLINT_BIN="$ddplint" OUTDIR="$out" SRCDIR="$MBI_DIR" TIMEOUT_S="$timeout_s"
export FLAGS_STR="${lang[*]} ${mpi_inc[*]}"
run_one() {
  local f=$1 base=${1%.c} start end rc
  start=$(date +%s.%N)
  # shellcheck disable=SC2086
  set +e
  (cd "$OUTDIR" && timeout "$TIMEOUT_S" "$DDPLINT_BIN" --format json -o "json/$base.json" -q --jobs 1 \
     "$SRCDIR/$f" -- $FLAGS_STR >"meta/$base.out" 2>&1)
  rc=$?
  set -e
  end=$(date +%s.%N)
  printf '%s\t%s\n' "$rc" "$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.2f", b-a}')" > "$OUTDIR/meta/$base.rc"
}
export -f run_one
t0=$(date +%s)
cut -f3 "$out/selection.tsv" | nice -n 10 xargs -P "$jobs" -I{} bash -c 'run_one "$@"' _ {}
t1=$(date +%s)

# --- score -----------------------------------------------------------------
/usr/bin/python3 - "$out" "$MBI_DIR" "$mode" "$((t1 - t0))" "$ddplint" <<'PY'
import json, os, re, sys
out, src, mode, wall, ddplint = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
marker = re.compile(r'/\*\s*MBIERROR\d*\s*\*/')
rows = []
for line in open(os.path.join(out, "selection.tsv")):
    kind, subset, f = line.rstrip("\n").split("\t")
    base = f[:-2]
    text = open(os.path.join(src, f), encoding="utf-8", errors="replace").read().splitlines()
    marks = [i + 1 for i, l in enumerate(text) if marker.search(l)]
    # marker lines that hold a call (the none_nok codes' else-branch marker is on an empty line)
    call_marks = [n for n in marks if re.search(r'MPI_\w+\s*\(', text[n - 1])]
    rc, secs = open(os.path.join(out, "meta", base + ".rc")).read().split()
    rc = int(rc)
    findings, errors, skipped = [], [], 0
    jp = os.path.join(out, "json", base + ".json")
    try:
        data = json.load(open(jp))
        findings = data.get("findings", [])
        errors = data.get("toolErrors", [])
        skipped = len(data.get("skipped", [])) or data.get("summary", {}).get("filesSkipped", 0)
    except Exception:
        pass
    log = open(os.path.join(out, "meta", base + ".out"), errors="replace").read()
    crashed = (rc not in (0, 1, 2)) or any("crash" in (e.get("message") or "").lower() for e in errors) \
        or "crash" in log.lower() or "Stack dump" in log
    compile_err = [e for e in errors if e.get("line", 0) and "crash" not in (e.get("message") or "").lower()]
    div = [x for x in findings if x.get("rule") == "ddp-divergent-collective"]
    other = [x for x in findings if x.get("rule") != "ddp-divergent-collective"]
    at_mark = [x for x in div if x.get("line") in marks]
    if rc in (124, 137):
        status = "timeout"
    elif crashed:
        status = "crash"
    elif compile_err:
        status = "compile-error"
    elif rc == 2:
        status = "exit2"
    elif skipped:
        status = "skipped"
    else:
        status = "ok"
    rows.append(dict(kind=kind, subset=subset, file=f, rc=rc, status=status, secs=float(secs),
                     div=len(div), other=len(other), at_mark=len(at_mark),
                     marks=",".join(map(str, call_marks)),
                     div_lines=",".join(str(x.get("line")) for x in div),
                     other_rules=",".join(sorted({x.get("rule", "?") for x in other})),
                     err=(errors[0].get("message", "") if errors else "").replace("\t", " ").replace("\n", " ")[:200]))

with open(os.path.join(out, "results.tsv"), "w") as o:
    cols = ["kind", "subset", "file", "rc", "status", "secs", "div", "at_mark", "other", "marks", "div_lines", "other_rules", "err"]
    o.write("\t".join(cols) + "\n")
    for r in rows:
        o.write("\t".join(str(r[c]) if c != "secs" else "%.2f" % r[c] for c in cols) + "\n")

bugs = [r for r in rows if r["kind"] == "bug"]
oks = [r for r in rows if r["kind"] == "ok"]
found_line = [r for r in bugs if r["at_mark"] > 0]
found_any = [r for r in bugs if r["div"] > 0]
div_in_bugs = sum(r["div"] for r in bugs)
fp_any = [r for r in oks if r["div"] + r["other"] > 0]
fp_div = [r for r in oks if r["div"] > 0]
crashes = [r for r in rows if r["status"] == "crash"]
timeouts = [r for r in rows if r["status"] == "timeout"]
cerr = [r for r in rows if r["status"] == "compile-error"]
exit2 = [r for r in rows if r["rc"] == 2]
skipped = [r for r in rows if r["status"] == "skipped"]
def pct(a, b): return "%.1f%%" % (100.0 * a / b) if b else "-"
lines = []
lines.append(f"MBI call-order evaluation, compiled as {'C (-xc -std=c11)' if mode == 'c' else 'C++ (-xc++ -std=c++17)'}")
import subprocess
build = os.environ.get("DDPLINT_BUILD_COMMIT") or subprocess.run(
    ["git", "-C", os.path.dirname(os.path.dirname(os.path.dirname(ddplint))), "rev-parse", "--short", "HEAD"],
    capture_output=True, text=True).stdout.strip() or "?"
lines.append(f"ddplint: {ddplint} (build at commit {build})")
lines.append("")
lines.append("| measure | value |")
lines.append("|---|---|")
lines.append(f"| bug codes | {len(bugs)} |")
lines.append(f"| bugs found at the bug's line (MBIERROR marker) | {len(found_line)} ({pct(len(found_line), len(bugs))}) |")
lines.append(f"| bugs with a ddp-divergent-collective finding anywhere | {len(found_any)} |")
lines.append(f"| ddp-divergent-collective findings in bug codes | {div_in_bugs} |")
lines.append(f"| diagnostics per bug found | {('%.2f' % (div_in_bugs / len(found_any))) if found_any else '-'} |")
lines.append(f"| bug codes with more than one ddp-divergent-collective finding | {sum(1 for r in bugs if r['div'] > 1)} |")
lines.append(f"| findings of other checks in bug codes | {sum(r['other'] for r in bugs)} |")
lines.append(f"| correct codes | {len(oks)} |")
lines.append(f"| correct codes flagged (any check) | {len(fp_any)} |")
lines.append(f"| correct codes flagged by ddp-divergent-collective | {len(fp_div)} |")
lines.append(f"| crashes | {len(crashes)} |")
lines.append(f"| timeouts | {len(timeouts)} |")
lines.append(f"| compile errors | {len(cerr)} |")
lines.append(f"| exit code 2 (any cause) | {len(exit2)} |")
lines.append(f"| skipped (ddplint: no check applies) | {len(skipped)} |")
lines.append(f"| wall time | {wall} s |")
lines.append("")
# misses grouped by the first collective pair shape, to see the classes
miss = [r for r in bugs if r["at_mark"] == 0]
if miss:
    by = {}
    for r in miss:
        m = re.match(r"CallOrdering_([A-Za-z]+)_([A-Za-z]+)_nok\.c", r["file"])
        for c in (m.group(1), m.group(2)) if m else ("?",):
            by[c] = by.get(c, 0) + 1
    lines.append("misses per collective named in the file name (a miss counts for both of its collectives):")
    lines.append("  " + ", ".join(f"{k} {v}" for k, v in sorted(by.items(), key=lambda kv: (-kv[1], kv[0]))))
    lines.append("first misses: " + ", ".join(r["file"] for r in miss[:12]))
if fp_any:
    lines.append("flagged correct codes: " + ", ".join(f"{r['file']}({r['div_lines'] or r['other_rules']})" for r in fp_any[:20]))
if crashes or timeouts:
    lines.append("crashes/timeouts: " + ", ".join(r["file"] for r in crashes + timeouts))
lines.append(f"per-file results: {os.path.join(out, 'results.tsv')}")
txt = "\n".join(lines)
print(txt)
open(os.path.join(out, "summary.txt"), "w").write(txt + "\n")
PY

#!/usr/bin/env bash
# Lint public PyTorch training code (Python) with ddplint and print, per repo:
# files, lines, findings by rule, tool errors, seconds; then write the findings
# list for triage.
#
# Usage:
#   scripts/real-world-python.sh CORPUS_DIR [options]
#
# CORPUS_DIR holds one folder per repo, named as in the first column of
# scripts/real-world-python/repos.tsv (name, repo, commit, path; one row per file):
#   CORPUS_DIR/pytorch-examples  CORPUS_DIR/torchtitan  CORPUS_DIR/pytorch-lightning ...
#
# Options:
#   --extract MIRRORS  first fill CORPUS_DIR/<name> with the listed files at the
#                      listed commit from bare git mirrors MIRRORS/<owner>+<name>/repo
#                      (what the session tool `fetch github:<owner>/<name>` leaves under
#                      /work/.mirror); fails if a mirror lacks the commit
#   --ddplint PATH     the binary (default: $DDPLINT, else build/bin/ddplint here)
#   --list FILE        the file list (default scripts/real-world-python/repos.tsv)
#   --only REGEX       only repos whose name matches REGEX
#   -j N               ddplint --jobs (default 2)
#   -o DIR             work folder (default /tmp/ddplint-real-world-python):
#                      json/<name>.json (the report), findings.tsv (for triage),
#                      summary.md (the table below), logs
#   --timeout S        per-run timeout (default 1800)
#
# Each repo is linted in one run, as a user would: ddplint --format json
# --root CORPUS_DIR/<name> --jobs N FILES... (.py files need no compile flags).
# A run that crashes, times out or prints no JSON is rerun file by file so the
# culprit file is named and the other files still count.
# Exit status: 0 when every run produced a report (findings are not failures),
# 1 when a file could not be linted (crash, timeout, no report), 2 usage.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpus=""
mirrors=""
ddplint="${DDPLINT:-$here/build/bin/ddplint}"
list="$here/scripts/real-world-python/repos.tsv"
only=""
jobs=2
out=/tmp/ddplint-real-world-python
timeout_s=1800
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

while [ $# -gt 0 ]; do
  case "$1" in
    --extract) mirrors=$2; shift 2 ;;
    --ddplint) ddplint=$2; shift 2 ;;
    --list) list=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    -j) jobs=$2; shift 2 ;;
    -j*) jobs=${1#-j}; shift ;;
    -o) out=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
    -*) echo "real-world-python.sh: unknown option '$1'" >&2; exit 2 ;;
    *) corpus=$1; shift ;;
  esac
done
[ -n "$corpus" ] || { echo "usage: scripts/real-world-python.sh CORPUS_DIR [options] (--help)" >&2; exit 2; }
[ -f "$list" ] || { echo "real-world-python.sh: no list $list" >&2; exit 2; }
[ -x "$ddplint" ] || { echo "real-world-python.sh: no ddplint at $ddplint (build it, or --ddplint PATH)" >&2; exit 2; }
mkdir -p "$corpus" "$out/json" "$out/logs" "$out/lists"
corpus=$(cd "$corpus" && pwd)

names=$(grep -v '^#' "$list" | cut -f1 | awk '!seen[$0]++' | grep -E "${only:-.}")
[ -n "$names" ] || { echo "real-world-python.sh: no repo matches '$only'" >&2; exit 2; }

# --extract: the listed paths at the listed commit, from the bare mirror.
if [ -n "$mirrors" ]; then
  for name in $names; do
    repo=$(awk -F'\t' -v n="$name" '$1==n {print $2; exit}' "$list")
    commit=$(awk -F'\t' -v n="$name" '$1==n {print $3; exit}' "$list")
    gitdir="$mirrors/${repo/\//+}/repo"
    if ! git --git-dir="$gitdir" cat-file -e "$commit^{commit}" 2>/dev/null; then
      echo "real-world-python.sh: $gitdir lacks $repo@$commit (fetch github:$repo)" >&2
      exit 1
    fi
    rm -rf "${corpus:?}/$name"
    mkdir -p "$corpus/$name"
    awk -F'\t' -v n="$name" '$1==n {print $4}' "$list" > "$out/lists/$name.paths"
    # git archive of exactly these paths (large non-Python blobs may be absent in
    # the mirror; they are not asked for).
    xargs -a "$out/lists/$name.paths" -d '\n' git --git-dir="$gitdir" archive "$commit" -- 2>> "$out/logs/extract.err" \
      | tar -x -C "$corpus/$name" || { echo "real-world-python.sh: extracting $name failed" >&2; exit 1; }
    echo "$commit" > "$corpus/$name/.ddplint-commit"
    echo "extracted $name ($repo@${commit:0:12}): $(wc -l < "$out/lists/$name.paths") files" >&2
  done
fi

build_rev=${DDPLINT_BUILD_COMMIT:-$(git -C "$(dirname "$ddplint")" rev-parse --short HEAD 2>/dev/null || echo "?")}
echo "# ddplint on real Python training code"
echo
echo "ddplint: $ddplint ($("$ddplint" --version 2>/dev/null | head -1 || true); checkout at $build_rev," \
     "binary built $(date -u -r "$ddplint" +%Y-%m-%dT%H:%MZ)); --jobs $jobs; $(date -u +%Y-%m-%dT%H:%MZ)"
echo
# Run a copy: a build that relinks the binary during the run would otherwise
# make some files fail with 'Permission denied' or a crash of a half-written file.
mkdir -p "$out/bin"
cp -p "$ddplint" "$out/bin/ddplint"
ddplint="$out/bin/ddplint"

status=0
: > "$out/results.tsv"
for name in $names; do
  dir="$corpus/$name"
  repo=$(awk -F'\t' -v n="$name" '$1==n {print $2; exit}' "$list")
  commit=$(awk -F'\t' -v n="$name" '$1==n {print $3; exit}' "$list")
  awk -F'\t' -v n="$name" '$1==n {print $4}' "$list" > "$out/lists/$name.paths"
  missing=0
  : > "$out/lists/$name.files"
  while IFS= read -r p; do
    if [ -f "$dir/$p" ]; then echo "$dir/$p" >> "$out/lists/$name.files"; else missing=$((missing+1)); fi
  done < "$out/lists/$name.paths"
  if [ "$missing" -gt 0 ]; then
    echo "real-world-python.sh: $name: $missing listed files missing under $dir (--extract MIRRORS)" >&2
    status=1
  fi
  nfiles=$(wc -l < "$out/lists/$name.files")
  [ "$nfiles" -gt 0 ] || continue
  lines=$(xargs -a "$out/lists/$name.files" -d '\n' cat | wc -l)
  have=$(cat "$dir/.ddplint-commit" 2>/dev/null || echo "$commit")
  [ "$have" = "$commit" ] || echo "real-world-python.sh: $name: extracted at $have, list says $commit" >&2

  json="$out/json/$name.json"
  rm -rf "$json" "$out/json/$name.d" "$out/logs/$name.failed"   # nothing from an earlier run
  t0=$(date +%s.%N)
  mapfile -t files < "$out/lists/$name.files"
  (cd "$dir" && timeout "$timeout_s" "$ddplint" --format json --jobs "$jobs" --root "$dir" -q \
      -o "$json" "${files[@]}" > "$out/logs/$name.out" 2> "$out/logs/$name.err")
  rc=$?
  t1=$(date +%s.%N)
  secs=$(echo "$t1 - $t0" | bc)
  mode=repo
  # rc 0 clean, 1 findings, 2 tool errors: each leaves a report.
  if ! "$PY" -c 'import json,sys; json.load(open(sys.argv[1]))' "$json" 2>/dev/null; then
    # No report: a crash or a timeout.
    mode=per-file
    echo "real-world-python.sh: $name: one run gave no JSON report (rc $rc); rerunning file by file" >&2
    mkdir -p "$out/json/$name.d"
    i=0
    t0=$(date +%s.%N)
    while IFS= read -r f; do
      i=$((i+1))
      (cd "$dir" && timeout 300 "$ddplint" --format json --jobs 1 --root "$dir" -q \
          -o "$out/json/$name.d/$i.json" "$f" > /dev/null 2>> "$out/logs/$name.err")
      frc=$?
      if ! "$PY" -c 'import json,sys; json.load(open(sys.argv[1]))' "$out/json/$name.d/$i.json" 2>/dev/null; then
        echo "$f	rc=$frc" >> "$out/logs/$name.failed"
        status=1
      fi
    done < "$out/lists/$name.files"
    t1=$(date +%s.%N)
    secs=$(echo "$t1 - $t0" | bc)
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$repo" "$commit" "$nfiles" "$lines" "$secs" "$mode" "$rc" \
    >> "$out/results.tsv"
done

# Tables and the findings list, from the JSON reports.
"$PY" - "$out" "$corpus" <<'EOF'
import collections, glob, json, os, sys
out, corpus = sys.argv[1], sys.argv[2]
rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(out, "results.tsv")) if l.strip()]
findings_tsv = open(os.path.join(out, "findings.tsv"), "w")
findings_tsv.write("repo\tfile\tline\tcolumn\trule\tseverity\tmessage\tsource_line\tverdict\treason\n")
errors_tsv = open(os.path.join(out, "tool-errors.tsv"), "w")
errors_tsv.write("repo\tfile\tline\tmessage\n")
table = []
all_rules = collections.Counter()
tot = collections.Counter()
for name, repo, commit, nfiles, lines, secs, mode, rc in rows:
    reports = ([os.path.join(out, "json", name + ".json")] if mode == "repo"
               else sorted(glob.glob(os.path.join(out, "json", name + ".d", "*.json"))))
    rules = collections.Counter()
    nerr = analyzed = skipped = 0
    failed = 0
    fpath = os.path.join(out, "logs", name + ".failed")
    if os.path.exists(fpath):
        failed = sum(1 for _ in open(fpath))
    for rp in reports:
        try:
            rep = json.load(open(rp))
        except (OSError, ValueError):
            continue
        s = rep.get("summary", {})
        analyzed += s.get("filesAnalyzed", 0)
        skipped += s.get("filesSkipped", 0)
        for e in rep.get("toolErrors", []):
            nerr += 1
            errors_tsv.write("%s\t%s\t%s\t%s\n" % (name, e.get("file"), e.get("line"),
                                                   " ".join(str(e.get("message", "")).split())))
        for f in rep.get("findings", []):
            rules[f.get("rule", "?")] += 1
            src = ""
            try:
                path = os.path.join(corpus, name, f["file"])
                src = open(path, encoding="utf-8", errors="replace").read().splitlines()[f["line"] - 1].strip()
            except (OSError, KeyError, IndexError, TypeError):
                pass
            findings_tsv.write("\t".join(str(x) for x in (
                name, f.get("file"), f.get("line"), f.get("column"), f.get("rule"), f.get("severity"),
                " ".join(str(f.get("message", "")).split()), src[:200], "", "")) + "\n")
    all_rules.update(rules)
    for k, v in (("files", int(nfiles)), ("lines", int(lines)), ("analyzed", analyzed),
                 ("skipped", skipped), ("findings", sum(rules.values())), ("errors", nerr),
                 ("failed", failed)):
        tot[k] += v
    tot["secs"] += float(secs)
    table.append((name, repo, commit[:12], int(nfiles), int(lines), analyzed, skipped,
                  ", ".join("%s %d" % kv for kv in sorted(rules.items())) or "none",
                  nerr, failed, float(secs), mode))
print("| repo | commit | files | lines | analyzed | skipped | findings by rule | tool errors | not linted | seconds | runs |")
print("|---|---|---:|---:|---:|---:|---|---:|---:|---:|---|")
for t in table:
    print("| %s (`%s`) | %s | %d | %d | %d | %d | %s | %d | %d | %.1f | %s |" % (
        t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], t[10], t[11]))
print("| **all** | | %d | %d | %d | %d | %s | %d | %d | %.1f | |" % (
    tot["files"], tot["lines"], tot["analyzed"], tot["skipped"],
    ", ".join("%s %d" % kv for kv in sorted(all_rules.items())) or "none",
    tot["errors"], tot["failed"], tot["secs"]))
print()
print("findings: %d (list for triage: %s); tool errors: %d (%s)" % (
    sum(all_rules.values()), os.path.join(out, "findings.tsv"), tot["errors"],
    os.path.join(out, "tool-errors.tsv")))
EOF
exit $status

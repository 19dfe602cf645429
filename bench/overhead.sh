#!/usr/bin/env bash
# How much do the ddp checks add to clang-tidy's own time on a translation
# unit that includes <torch/torch.h>?
#
#   bench/overhead.sh [-n RUNS] [-p PROFILE_RUNS] [TU]
#
# TU defaults to examples/trainer/train.cpp (real LibTorch 1.13 + c10d Gloo
# headers); its flags come from the example's compile_commands.json, which this
# script generates in a temporary build directory.  Runs, alternating order
# round by round, after one untimed warm-up run of each:
#   (a) baseline: clang-tidy-19 --checks='-*,readability-braces-around-statements'
#       (header parsing + one trivial upstream check; clang-tidy refuses to run
#       with no checks at all)
#   (b) ddp:      clang-tidy-19 --load build/lib/ddplint-tidy.so --checks='-*,ddp-*'
# each under /usr/bin/time -v for the peak RSS, then PROFILE_RUNS runs of (b)
# with --enable-check-profile for the checks' own time.  Prints a markdown
# report on stdout.  Exit 1 if the CPU-time overhead (steadier than wall time
# on a shared machine) exceeds DDPLINT_BENCH_LIMIT_PCT (default 5) percent,
# 2 on a tool failure.
#
# Environment: CLANG_TIDY (default clang-tidy-19), DDPLINT_PLUGIN (default
# <repo>/build/lib/ddplint-tidy.so), DDPLINT_BENCH_LIMIT_PCT.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
runs=5
prof_runs=3
while getopts "n:p:h" opt; do
  case $opt in
  n) runs=$OPTARG ;;
  p) prof_runs=$OPTARG ;;
  *) sed -n '2,22p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
tu="$(realpath "${1:-$repo/examples/trainer/train.cpp}")"
tidy="${CLANG_TIDY:-clang-tidy-19}"
plugin="${DDPLINT_PLUGIN:-$repo/build/lib/ddplint-tidy.so}"
limit="${DDPLINT_BENCH_LIMIT_PCT:-5}"
for tool in "$tidy" /usr/bin/time python3 cmake; do
  command -v "$tool" >/dev/null || { echo "overhead.sh: $tool not found (apt-get install time?)" >&2; exit 2; }
done
[[ -f "$plugin" ]] || { echo "overhead.sh: plugin not found: $plugin" >&2; exit 2; }

tmp="$(mktemp -d "${TMPDIR:-/tmp}/ddplint-bench.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
cmake -S "$repo/examples/trainer" -B "$tmp/build" >"$tmp/cmake.log" 2>&1 ||
  { cat "$tmp/cmake.log" >&2; echo "overhead.sh: configuring examples/trainer failed" >&2; exit 2; }

# --warnings-as-errors='-*': findings must not change the exit status, so a
# non-zero exit means the tool failed.
common=(--quiet --warnings-as-errors='-*' -p "$tmp/build")
baseline=("$tidy" --checks='-*,readability-braces-around-statements' "${common[@]}" "$tu")
ddp=("$tidy" --load "$plugin" --checks='-*,ddp-*' "${common[@]}" "$tu")

# run LABEL CMD...: one timed run; appends "LABEL WALL_S CPU_S RSS_KB" to samples
# (CPU = user + system time of clang-tidy, from /usr/bin/time -v).
run() {
  local label=$1
  shift
  local t0 t1
  t0=$(date +%s.%N)
  if ! /usr/bin/time -v -o "$tmp/time.txt" "$@" >"$tmp/out.txt" 2>&1; then
    tail -20 "$tmp/out.txt" >&2
    echo "overhead.sh: run failed: $*" >&2
    exit 2
  fi
  t1=$(date +%s.%N)
  local rss cpu
  rss=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$tmp/time.txt")
  cpu=$(awk -F: '/(User|System) time \(seconds\)/ {s += $2} END {print s}' "$tmp/time.txt")
  if [[ -n $label ]]; then
    echo "$label $(echo "$t1 - $t0" | bc -l) $cpu $rss" >>"$tmp/samples"
  fi
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "overhead.sh: warm-up, then $runs alternating runs of each configuration..." >&2
run "" "${baseline[@]}"
run "" "${ddp[@]}"
for ((i = 1; i <= runs; i++)); do
  if ((i % 2)); then
    run a "${baseline[@]}"
    run b "${ddp[@]}"
  else
    run b "${ddp[@]}"
    run a "${baseline[@]}"
  fi
  echo "  round $i/$runs: $(tail -2 "$tmp/samples" | tr '\n' ' ')" >&2
done
echo "overhead.sh: $prof_runs profiled runs of the ddp checks..." >&2
for ((i = 1; i <= prof_runs; i++)); do
  run "" "${ddp[@]}" --enable-check-profile --store-check-profile="$tmp/profile/$i"
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

rc=0
python3 - "$tmp/samples" "$tmp/profile" "$limit" <<'PY' || rc=$?
import glob, json, os, statistics as st, sys
samples, profdir, limit = sys.argv[1], sys.argv[2], float(sys.argv[3])
wall = {"a": [], "b": []}
cpu = {"a": [], "b": []}
rss = {"a": [], "b": []}
for line in open(samples):
    label, w, c, r = line.split()
    wall[label].append(float(w))
    cpu[label].append(float(c))
    rss[label].append(int(r) / 1024.0)
a, b = st.median(wall["a"]), st.median(wall["b"])
ca, cb = st.median(cpu["a"]), st.median(cpu["b"])
# Rounds pair one (a) and one (b) run taken back to back.
paired = [100.0 * (y - x) / x for x, y in zip(wall["a"], wall["b"])]
overhead = 100.0 * (b - a) / a
cpu_overhead = 100.0 * (cb - ca) / ca
ra, rb = st.median(rss["a"]), st.median(rss["b"])

checks = {}
totals = []
for f in glob.glob(os.path.join(profdir, "*", "*.json")):
    prof = json.load(open(f))["profile"]
    total = 0.0
    for key, value in prof.items():
        parts = key.split(".")  # time.clang-tidy.<check>.wall
        if parts[-1] != "wall" or not parts[2].startswith("ddp-"):
            continue
        checks.setdefault(parts[2], []).append(value)
        total += value
    totals.append(total)

print("| configuration | runs | median wall (s) | min–max wall (s) | median CPU user+sys (s) | median peak RSS (MiB) |")
print("|---|---:|---:|---:|---:|---:|")
print(f"| (a) baseline: `--checks='-*,readability-braces-around-statements'` | {len(wall['a'])} | {a:.2f} | {min(wall['a']):.2f}–{max(wall['a']):.2f} | {ca:.2f} | {ra:.0f} |")
print(f"| (b) ddp: `--load ddplint-tidy.so --checks='-*,ddp-*'` | {len(wall['b'])} | {b:.2f} | {min(wall['b']):.2f}–{max(wall['b']):.2f} | {cb:.2f} | {rb:.0f} |")
print(f"| **overhead (b) vs (a)** | | **{overhead:+.1f} %** | paired per round: median {st.median(paired):+.1f} % (range {min(paired):+.1f}…{max(paired):+.1f} %) | **{cpu_overhead:+.1f} %** | {rb - ra:+.0f} MiB ({100.0 * (rb - ra) / ra:+.1f} %) |")
print()
if checks:
    n = len(totals)
    print(f"| ddp check (`--enable-check-profile`, median of {n} runs) | wall (ms) | % of baseline wall | % of baseline CPU |")
    print("|---|---:|---:|---:|")
    for name in sorted(checks):
        t = st.median(checks[name])
        print(f"| {name} | {1000 * t:.1f} | {100 * t / a:.2f} % | {100 * t / ca:.2f} % |")
    t = st.median(totals)
    print(f"| **all ddp checks** | **{1000 * t:.1f}** | **{100 * t / a:.2f} %** | **{100 * t / ca:.2f} %** |")
    print()
# clang-tidy is single-threaded: on a quiet machine its wall time is its CPU
# time.  On a shared machine CPU time is the steadier measure, so it decides.
verdict = "PASS" if cpu_overhead <= limit else "FAIL"
print(f"Target: the ddp checks add ≤ {limit:g} % → **{verdict}** (CPU time {cpu_overhead:+.1f} %, wall time {overhead:+.1f} %).")
sys.exit(0 if cpu_overhead <= limit else 1)
PY
echo
echo "- TU: \`${tu#"$repo"/}\` ($(grep -c '' "$tu") lines; its flags from the example's compile_commands.json)"
echo "- clang-tidy: $("$tidy" --version | grep -o 'LLVM version [0-9.]*'); plugin: \`${plugin#"$repo"/}\`"
echo "- machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), load average before/after: $load_before / $load_after"
quote() { local out="" a; for a in "$@"; do out+="$(printf '%q' "$a") "; done; echo "${out% }"; }
echo "- (a) \`$(quote "${baseline[@]}")\`"
echo "- (b) \`$(quote "${ddp[@]}")\`"
echo "- profile: (b) plus \`--enable-check-profile --store-check-profile=DIR\`"
exit $rc

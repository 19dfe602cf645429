#!/usr/bin/env bash
# Benchmark of ddp-harness, in one run:
#   1. `ddp-harness run --all` (both variants of every scenario, Gloo): wall
#      time, and the detection latency of each bad variant;
#   2. per-collective cost of the tracer against plain c10d and against
#      c10d::ProcessGroupWrapper (TORCH_DISTRIBUTED_DEBUG=DETAIL's mechanism).
#
# usage: bench/run_bench.sh [BUILD_DIR] [WORLD_SIZE]
#   BUILD_DIR: where bin/ddp-harness and bin/ddp-harness-bench are (default: build)
set -euo pipefail

build=${1:-build}
world=${2:-4}
harness="$build/bin/ddp-harness"
bench="$build/bin/ddp-harness-bench"
for b in "$harness" "$bench"; do
  [[ -x "$b" ]] || { echo "run_bench.sh: $b not found; build first (cmake --build $build)" >&2; exit 2; }
done
out=$(mktemp -d "${TMPDIR:-/tmp}/ddp-harness-bench.XXXXXX")
trap 'rm -rf "$out"' EXIT

echo "# ddp-harness benchmark"
echo "host $(hostname), $(nproc) cores, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo
echo "## 1. run --all --backend gloo --world-size $world"
start=$(date +%s.%N)
set +e
"$harness" run --all --backend gloo --world-size "$world" --out "$out/all" --quiet > "$out/table.txt"
rc=$?
set -e
end=$(date +%s.%N)
cat "$out/table.txt"
printf 'wall time: %s s, exit status %d (0: every verdict as expected)\n' \
  "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')" "$rc"
echo
echo "detection latency per scenario (bad variant, seconds from the onset of the failure to the verdict):"
awk '$2 == "bad" && $6 != "-" { printf "  %-40s %-8s %s s\n", $1, $3, $6 }' "$out/table.txt"
awk '$2 == "bad" && $6 != "-" { print $6 }' "$out/table.txt" | sort -g |
  awk '{ v[NR] = $1 } END { if (NR) printf "  median %.2f s, max %.2f s over %d scenarios\n", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[NR], NR }'
echo
echo "## 2. per-collective overhead (2 ranks, Gloo, allreduce of 1 float)"
"$bench" --world-size 2

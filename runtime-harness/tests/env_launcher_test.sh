#!/usr/bin/env bash
# ddp-harness under an external launcher, played by this script: one process
# per rank with RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT, as srun or a
# Kubernetes job would start them.  Rank 0's supervisor must name the rank
# that entered the final barrier early; every process must exit.
set -u
harness=$1
out=$2
world=${3:-2}
rm -rf "$out"
mkdir -p "$out"
port=$((20000 + $$ % 9000))
pids=()
for ((r = 0; r < world; r++)); do
  RANK=$r WORLD_SIZE=$world LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port TMPDIR="$out" \
    timeout 120 "$harness" run uneven-iterations --variant bad --launcher env --out "$out/rank$r" \
    > "$out/rank$r.stdout" 2>&1 &
  pids+=($!)
done
fail=0
for ((r = 0; r < world; r++)); do
  wait "${pids[$r]}"
  rc=$?
  if [[ $rc -ne 0 ]]; then echo "FAIL: supervisor of rank $r exited $rc"; cat "$out/rank$r.stdout"; fail=1; fi
done
cat "$out/rank0.stdout"
report="$out/rank0/uneven-iterations.bad.w$world.report.json"
last=$((world - 1))
grep -q "\"culprits\":\[$last\]" "$report" || { echo "FAIL: culprit is not rank $last"; fail=1; }
grep -q '"launcher":"env"' "$report" || { echo "FAIL: report does not say launcher env"; fail=1; }
if pgrep -f -- "--out $out/rank" > /dev/null; then echo "FAIL: processes left behind"; fail=1; fi
if compgen -G "$out/ddp-harness-job-*" > /dev/null; then echo "FAIL: job directory left behind"; fail=1; fi
[[ $fail -eq 0 ]] && echo PASSED
exit $fail

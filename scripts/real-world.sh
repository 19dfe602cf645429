#!/usr/bin/env bash
# Lint public C/C++/CUDA code that uses c10d, NCCL or MPI (issue 8 item 11) and
# print the table of docs/real-world.md ("C and C++ programs") to stdout.
#
# Usage:
#   scripts/real-world.sh ROOT [options]
#
# ROOT holds the fetched sources, one folder per project as named in the first
# column of scripts/real-world/files.tsv:
#   ROOT/pytorch-examples  ROOT/nccl-tests  ROOT/LULESH  ROOT/hpcg  ROOT/miniVite
#   ROOT/miniFE  ROOT/xllm  ROOT/DeepSpeed  ROOT/_deps/argparse (dcgan's header)
# A project folder's commit is read from ROOT/<project>/.ddplint-commit (one
# line), else from git if it is a checkout, else shown as "?".  Variants such
# as "LULESH (serial)" use the folder of the name before " (".
#
# Options:
#   --extract MIRRORS  first fill ROOT from bare git mirrors MIRRORS/<owner>+<name>/repo
#                      (what the session tool `fetch github:<owner>/<name>` leaves
#                      under /work/.mirror), writing .ddplint-commit
#   --ddplint PATH     the binary (default: $DDPLINT, else build/bin/ddplint here)
#   --list FILE        the file list (default scripts/real-world/files.tsv)
#   --only REGEX       only projects whose name matches REGEX
#   -j N               parallel ddplint processes (default 2, run under nice -n 10)
#   -o DIR             work folder (default /tmp/ddplint-real-world): results.tsv
#                      (one row per file and torch mode), json/, logs
#   --timeout S        per-file timeout (default 300)
# DDPLINT_BUILD_COMMIT names the build's commit in the table when the binary
# is a copy outside its checkout (else git of the binary's checkout).
#
# Each file is linted alone: ddplint --format json FILE -- <lang flags> <flags>.
# Files marked torch=yes run twice: LibTorch headers on -I (a hand-written
# Makefile, a vendored libtorch) and on -isystem (CMake's imported target).
# A file that does not compile, crashes or times out is recorded, never fatal.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
root=""
mirrors=""
ddplint="${DDPLINT:-$here/build/bin/ddplint}"
list="$here/scripts/real-world/files.tsv"
only=""
jobs=2
out=/tmp/ddplint-real-world
timeout_s=300

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
    -h|--help) sed -n '2,32p' "$0"; exit 0 ;;
    -*) echo "real-world.sh: unknown option '$1'" >&2; exit 2 ;;
    *) root=$1; shift ;;
  esac
done
[ -n "$root" ] || { echo "usage: scripts/real-world.sh ROOT [--extract MIRRORS] [--ddplint PATH] [-j N]" >&2; exit 2; }
mkdir -p "$root"; root=$(cd "$root" && pwd)

# --- optional extraction from bare mirrors -----------------------------------
if [ -n "$mirrors" ]; then
  extract() { # project owner/name [paths...]
    local p=$1 repo=$2 d; shift 2
    d="$mirrors/${repo/\//+}/repo"
    if [ ! -d "$d" ]; then echo "real-world.sh: no mirror $d (fetch github:$repo first)" >&2; return; fi
    [ -d "$d/.git" ] && d="$d/.git" # a snapshot with a work tree
    rm -rf "${root:?}/$p"; mkdir -p "$root/$p"
    # large repositories: only the folders the list needs (missing LFS blobs make a full archive fail)
    # rev=TAG pins a release (NCCL's examples at the release whose headers CUDA 13 ships)
    git --git-dir="$d" archive "${rev:-HEAD}" "$@" | tar -x -C "$root/$p"
    git --git-dir="$d" rev-parse "${rev:-HEAD}^{commit}" > "$root/$p/.ddplint-commit"
  }
  extract pytorch-examples pytorch/examples cpp
  extract nccl-tests NVIDIA/nccl-tests
  extract LULESH LLNL/LULESH
  extract hpcg hpcg-benchmark/hpcg
  extract miniVite ECP-ExaGraph/miniVite
  extract miniFE Mantevo/miniFE ref
  extract xllm jd-opensource/xllm xllm
  extract DeepSpeed microsoft/DeepSpeed csrc/cpu/comm csrc/includes
  extract _deps/argparse p-ranav/argparse include
  extract llm.c karpathy/llm.c train_gpt2.cu llmc dev/cuda
  extract multi-gpu-programming-models NVIDIA/multi-gpu-programming-models
  extract baidu-allreduce baidu-research/baidu-allreduce
  extract HPCCG Mantevo/HPCCG
  extract CoMD ECP-copa/CoMD src-mpi
  extract miniMD Mantevo/miniMD ref
  extract Kernels ParRes/Kernels MPI1 MPIRMA MPISHM MPIOPENMP Cxx11 include common
  extract mpitutorial wesleykendall/mpitutorial tutorials
  rev=v2.28.9-1 extract nccl-examples NVIDIA/nccl examples
  rev=ba256dccb033d385c23a4a02983b2d137eebeca4 extract CloverLeaf UoB-HPC/CloverLeaf driver src/serial
  rev=e70261c0be40537da75b258108ed2898f84f3c58 extract TeaLeaf UoB-HPC/TeaLeaf driver src/serial
fi

[ -x "$ddplint" ] || { echo "real-world.sh: no ddplint binary at '$ddplint' (build it, or pass --ddplint)" >&2; exit 2; }
ddplint=$(cd "$(dirname "$ddplint")" && pwd)/$(basename "$ddplint")

# --- toolchain flags ---------------------------------------------------------
mpi_flags=""
if command -v mpicc >/dev/null; then
  for d in $(mpicc --showme:incdirs); do mpi_flags+=" -I$d"; done
else
  echo "real-world.sh: mpicc not found (apt-get install libopenmpi-dev); MPI files will not compile" >&2
fi
cuda=""
if command -v nvcc >/dev/null; then cuda=$(dirname "$(dirname "$(command -v nvcc)")"); fi
for c in /usr/local/cuda /usr/lib/cuda; do [ -z "$cuda" ] && [ -f "$c/include/cuda_runtime.h" ] && cuda=$c; done
cuda_flags=""
[ -n "$cuda" ] && cuda_flags="-I$cuda/include"
torch_inc="/usr/include /usr/include/torch/csrc/api/include"
# -isystem /usr/include would break libstdc++'s #include_next <stdlib.h>; torch's
# own headers under /usr/include are system headers already.
torch_isystem="/usr/include/torch/csrc/api/include"
# OpenMP: clang finds omp.h in its resource dir once libomp-19-dev is installed
# (GCC's omp.h does not parse with clang).  {OMP} stays empty either way.
omp_flags=""
if ! [ -f "$(clang-19 -print-resource-dir 2>/dev/null)/include/omp.h" ]; then
  echo "real-world.sh: no omp.h for clang (apt-get install libomp-19-dev); OpenMP files will not compile" >&2
fi

rm -rf "$out"; mkdir -p "$out/json" "$out/log" "$out/stub"
# Host-side CUDA parsing with clang: CUDA 13 dropped texture_fetch_functions.h,
# which clang's CUDA wrapper still includes (an empty stub, searched last), and
# NCCL 2.28's device headers test "#if __CUDACC__", which clang defines empty.
: > "$out/stub/texture_fetch_functions.h"
printf '#undef __CUDACC__\n#define __CUDACC__ 1\n' > "$out/stub/cudacc-value.h"
cuda_host="-xcuda --cuda-host-only -nocudalib -Wno-unknown-cuda-version -idirafter $out/stub -include $out/stub/cudacc-value.h"
[ -n "$cuda" ] && cuda_host+=" --cuda-path=$cuda -I$cuda/include -I$cuda/include/cccl"

# --- job list ------------------------------------------------------------------
n=0
: > "$out/jobs.tsv"
while IFS=$'\t' read -r project repo lang torch file flags; do
  case "$project" in ''|'#'*) continue ;; esac
  if [ -n "$only" ] && ! [[ "$project" =~ $only ]]; then continue; fi
  dir=${project%% (*}
  flags=${flags//\{P\}/$root/$dir}
  flags=${flags//\{ROOT\}/$root}
  flags=${flags//\{MPI\}/$mpi_flags}
  flags=${flags//\{CUDA\}/$cuda_flags}
  flags=${flags//\{OMP\}/$omp_flags}
  case "$lang" in
    c) lf="-xc" ;;
    cuda) lf="$cuda_host" ;;
    *) lf="-xc++" ;;
  esac
  modes="-"
  [ "$torch" = yes ] && modes="I isystem"
  for m in $modes; do
    tf=""
    if [ "$m" = I ]; then for d in $torch_inc; do tf+=" -I$d"; done; fi
    if [ "$m" = isystem ]; then for d in $torch_isystem; do tf+=" -isystem $d"; done; fi
    n=$((n + 1))
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$project" "$m" "$root/$dir/$file" "$file" "$lf $flags$tf" >> "$out/jobs.tsv"
  done
done < "$list"
echo "real-world.sh: $n runs ($(cut -f2 "$out/jobs.tsv" | sort -u | wc -l) projects), -j $jobs" >&2

export DDPLINT_BIN="$ddplint" OUTDIR="$out" TIMEOUT_S="$timeout_s"
run_one() { # id
  local id=$1 line path flags start end rc
  line=$(awk -F'\t' -v id="$id" '$1 == id' "$OUTDIR/jobs.tsv")
  path=$(cut -f4 <<<"$line"); flags=$(cut -f6 <<<"$line")
  start=$(date +%s.%N)
  if [ -f "$path" ]; then
    # shellcheck disable=SC2086
    (cd "$OUTDIR" && timeout "$TIMEOUT_S" "$DDPLINT_BIN" --format json -o "json/$id.json" -q --jobs 1 \
       "$path" -- $flags >"log/$id.log" 2>&1)
    rc=$?
  else
    echo "missing file $path" > "$OUTDIR/log/$id.log"; rc=127
  fi
  end=$(date +%s.%N)
  printf '%s\t%s\n' "$rc" "$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.2f", b-a}')" > "$OUTDIR/log/$id.rc"
}
export -f run_one
t0=$(date +%s)
cut -f1 "$out/jobs.tsv" | nice -n 10 xargs -P "$jobs" -I{} bash -c 'run_one "$@"' _ {}
t1=$(date +%s)

# --- table ---------------------------------------------------------------------
/usr/bin/python3 - "$out" "$root" "$((t1 - t0))" "$ddplint" <<'PY'
import json, os, subprocess, sys
out, root, wall, ddplint = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
rows = []
for line in open(os.path.join(out, "jobs.tsv")):
    jid, project, mode, path, rel, flags = line.rstrip("\n").split("\t")
    rc, secs = open(os.path.join(out, "log", jid + ".rc")).read().split()
    rc = int(rc)
    data = {}
    try:
        data = json.load(open(os.path.join(out, "json", jid + ".json")))
    except Exception:
        pass
    findings = data.get("findings", [])
    errors = data.get("toolErrors", [])
    log = open(os.path.join(out, "log", jid + ".log"), errors="replace").read()
    crash = rc not in (0, 1, 2, 124, 137, 127) or "Stack dump" in log or \
        any("crash" in (e.get("message") or "").lower() for e in errors)
    cerr = [e for e in errors if e.get("line", 0) and "crash" not in (e.get("message") or "").lower()]
    skipped = len(data.get("skipped", [])) or data.get("summary", {}).get("filesSkipped", 0)
    status = ("timeout" if rc in (124, 137) else "missing" if rc == 127 else "crash" if crash
              else "compile-error" if cerr else "exit2" if rc == 2 else "skipped" if skipped else "ok")
    # findings inside the project's own files vs. in other files (headers of torch, MPI, ...)
    own = [f for f in findings if not os.path.isabs(f.get("file", "")) or f.get("file", "").startswith(root)]
    rows.append(dict(id=jid, project=project, mode=mode, file=rel, rc=rc, status=status, secs=float(secs),
                     findings=findings, nerr=len(cerr),
                     first_err=(cerr[0].get("message", "") if cerr else (errors[0].get("message", "") if errors else ""))))

def commit(project):
    d = os.path.join(root, project.split(" (")[0])
    p = os.path.join(d, ".ddplint-commit")
    if os.path.exists(p):
        return open(p).read().strip()[:12]
    try:
        return subprocess.run(["git", "-C", d, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True).stdout.strip() or "?"
    except Exception:
        return "?"

with open(os.path.join(out, "results.tsv"), "w") as o:
    o.write("project\tmode\tfile\trc\tstatus\tsecs\tcompile_errors\tfindings\tfirst_error\n")
    for r in rows:
        fs = "; ".join(f"{f.get('rule')}@{os.path.basename(f.get('file',''))}:{f.get('line')}" for f in r["findings"])
        o.write(f"{r['project']}\t{r['mode']}\t{r['file']}\t{r['rc']}\t{r['status']}\t{r['secs']:.2f}\t{r['nerr']}\t{fs}\t{r['first_err'][:160]}\n")
    o.write("")

# one table row per project and torch mode
groups = {}
for r in rows:
    groups.setdefault((r["project"], r["mode"]), []).append(r)
build = os.environ.get("DDPLINT_BUILD_COMMIT") or subprocess.run(
    ['git', '-C', os.path.dirname(os.path.dirname(os.path.dirname(ddplint))), 'rev-parse', '--short', 'HEAD'],
    capture_output=True, text=True).stdout.strip() or '?'
print(f"Measured with `{ddplint}` (build at commit {build}), "
      f"wall time {wall} s for all runs.")
print()
print("| project | commit | torch headers | files | compile errors | skipped | crashes / timeouts | findings (by rule) | time (s, sum) |")
print("|---|---|---|---|---|---|---|---|---|")
for (project, mode), rs in groups.items():
    byrule = {}
    for r in rs:
        for f in r["findings"]:
            byrule[f.get("rule")] = byrule.get(f.get("rule"), 0) + 1
    nf = sum(byrule.values())
    rules = ", ".join(f"{k} {v}" for k, v in sorted(byrule.items()))
    ce = sum(1 for r in rs if r["status"] == "compile-error")
    cr = [r for r in rs if r["status"] in ("crash", "timeout", "missing")]
    crs = ", ".join(f"{os.path.basename(r['file'])} ({r['status']})" for r in cr) or "0"
    tm = {"-": "-", "I": "-I", "isystem": "-isystem"}[mode]
    sk = sum(1 for r in rs if r["status"] == "skipped")
    print(f"| {project} | {commit(project)} | {tm} | {len(rs)} | {ce} | {sk} | {crs} | {nf}{' (' + rules + ')' if nf else ''} | {sum(r['secs'] for r in rs):.0f} |")
print()
print("Findings:")
seen = False
for r in rows:
    for f in r["findings"]:
        seen = True
        print(f"- {r['project']} [{r['mode']}] {f.get('file')}:{f.get('line')}: {f.get('rule')}: {f.get('message', '')[:200]}")
if not seen:
    print("- none")
print()
print(f"Per-file results: {os.path.join(out, 'results.tsv')}")
PY

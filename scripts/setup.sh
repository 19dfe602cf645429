#!/usr/bin/env bash
# Installs everything ddplint needs on Debian 12 from Debian's own archive.
# Idempotent: packages already installed are left alone.
set -euo pipefail

PACKAGES=(
  # build
  cmake ninja-build g++ python3 git
  # LLVM 19 (the default build): clang-tidy host, Clang/LLVM CMake packages, FileCheck
  clang-tidy-19 clang-19 libclang-19-dev llvm-19-dev llvm-19-tools
  # LLVM 22: the second supported major (and the version-guard test's other host)
  clang-tidy-22 libclang-22-dev llvm-22-dev
  # LibTorch 1.13 (CPU, c10d with Gloo) for the runtime harness and real-header tests
  libtorch-dev libgloo-dev
  # catalog generator and tests
  libyaml-cpp-dev catch2
  # the API catalog's header test (rules/api.yaml against the installed mpi.h),
  # the C lit tests on the real mpi.h, and the stress corpus (tests/stress:
  # Eigen, Boost and the rest of the installed library headers)
  libopenmpi-dev libeigen3-dev libboost-dev
  # ddplint-clangd: Debian's clangd libraries were built with the remote index (gRPC)
  libgrpc++-dev libprotobuf-dev
  # tests of the front ends: SARIF schema validation, the pre-commit hook, the LSP client
  python3-jsonschema pre-commit
  # benchmarks (bench/) and the real-world C/C++ corpus (scripts/real-world.sh:
  # clang finds omp.h for the OpenMP units only once libomp-19-dev is installed)
  bc time libomp-19-dev
  # real torch for Python (tests/python-torch, ctest -L python-torch): the
  # implicit collectives of rules/api.yaml (python.implicit_collectives) run as
  # 2-rank Gloo jobs on torch 1.13 (CPU), for Debian's /usr/bin/python3 only;
  # PyYAML for the CI workflow's test (tests/cli/test_workflow.py)
  python3-torch python3-yaml
  # the Python frontend: the tree-sitter runtime (the grammar comes from npm, below)
  libtree-sitter-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages are installed"
else
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The tree-sitter Python grammar (generated C sources), from the npm registry, pinned.
bash "$(dirname "$0")/setup-tree-sitter-python.sh"

# The SARIF 2.1.0 schema and Microsoft's SARIF validator (for the SARIF tests),
# from the npm registry, pinned.
if [ -f "$(dirname "$0")/setup-sarif-validator.sh" ]; then
  bash "$(dirname "$0")/setup-sarif-validator.sh"
fi

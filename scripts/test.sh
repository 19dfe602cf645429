#!/usr/bin/env bash
# The README's test command (and CI's): install, build everything, run every test.
#   1. LLVM 19 build: plugin, harness, unit/lit/consistency/harness tests (ctest)
#   2. LLVM 22 build of the same sources: the plugin, and the lit tests against clang-tidy-22
#   3. Sanitizer build (ASan + UBSan): the check library, the CLI and their
#      tests, the stress corpus and the lit programs through the CLI, the
#      Python lit corpus and the CLI's config and Python tests
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
jobs=${DDPLINT_JOBS:-$(nproc)}

bash scripts/build.sh -DDDPLINT_BUILD_HARNESS=ON -DDDPLINT_BUILD_TESTS=ON
# Static tests in parallel; the harness alone afterwards, since its verdicts
# are timed (detection latency) and must not compete with clang-tidy for the CPUs.
ctest --test-dir build --output-on-failure -j "$jobs" -LE harness
ctest --test-dir build --output-on-failure -L harness

if [ "${DDPLINT_SKIP_LLVM22:-0}" != 1 ]; then
  cmake -S . -B build-llvm22 -G Ninja -DCMAKE_BUILD_TYPE=Release -DDDPLINT_LLVM_VERSION=22 \
        -DDDPLINT_BUILD_HARNESS=OFF >/dev/null
  cmake --build build-llvm22 -j "$jobs" --target ddplint-tidy ddplint-gen-catalog
  ctest --test-dir build-llvm22 --output-on-failure -j "$jobs" -L 'lit|consistency'
fi

if [ "${DDPLINT_SKIP_SANITIZE:-0}" != 1 ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDDPLINT_SANITIZE=ON \
        -DDDPLINT_BUILD_HARNESS=OFF -DDDPLINT_BUILD_TESTS=ON >/dev/null
  cmake --build build-asan -j "$jobs" --target ddplint core_tests frontend_tests report_tests
  # LLVM frees nothing at exit on purpose (-disable-free): leaks are not findings.
  # use_sigaltstack=0: LLVM installs its own signal stack on the thread that
  # first writes a temporary file; ASan must not unmap it (see Main.cpp).
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:use_sigaltstack=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs" \
      -R '^(unit/|report/unit|stress/|python/lit/|cli/PythonRuns|cli/PythonAcrossModules|cli/Configs|cli/AcrossUnits)'
fi

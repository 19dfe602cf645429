#!/usr/bin/env bash
# Configures and builds ddplint into build/ (the plugin: build/lib/ddplint-tidy.so).
#   scripts/build.sh [extra cmake args]
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${DDPLINT_JOBS:-$(nproc)}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build -j "$jobs"

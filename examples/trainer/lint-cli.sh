#!/usr/bin/env bash
# Lints the example trainer with the ddplint CLI (build/bin/ddplint).
#
#   examples/trainer/lint-cli.sh [extra ddplint args...]
#
# Configures the example's CMake project (for compile_commands.json), then runs
#   ddplint -p <build> --jobs 2 train.cpp model.cpp train.py
# (the C++ units through the compile database, the Python trainer without one,
# in one report)
# Exit status is ddplint's: 0 no findings, 1 findings, 2 the lint itself failed
# (configure error, compile error, missing binary).
#
# Environment: DDPLINT (default <repo>/build/bin/ddplint), DDPLINT_EXAMPLE_BUILD
# (default examples/trainer/build).
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
ddplint="${DDPLINT:-$repo/build/bin/ddplint}"
build="${DDPLINT_EXAMPLE_BUILD:-$here/build}"

if [[ ! -x "$ddplint" ]]; then
  echo "lint-cli.sh: ddplint not found: $ddplint (build it: cmake --build $repo/build --target ddplint)" >&2
  exit 2
fi
ddplint="$(cd "$(dirname "$ddplint")" && pwd)/$(basename "$ddplint")"
generator=()
if [[ ! -f "$build/CMakeCache.txt" ]] && command -v ninja >/dev/null; then
  generator=(-G Ninja)
fi
if ! cmake_log="$(cmake -S "$here" -B "$build" "${generator[@]}" 2>&1)"; then
  echo "$cmake_log" >&2
  echo "lint-cli.sh: configuring the example failed (needs libtorch-dev and libgloo-dev)" >&2
  exit 2
fi
cd "$here" && exec "$ddplint" -p "$build" --jobs 2 "$@" train.cpp model.cpp train.py

#!/usr/bin/env bash
# Lints the example trainer with the ddplint clang-tidy plugin.
#
#   examples/trainer/lint.sh [extra clang-tidy args...]
#
# Configures the example's CMake project (for compile_commands.json), then runs
#   clang-tidy-19 --load <repo>/build/lib/ddplint-tidy.so --checks='-*,ddp-*' -p <build> <files>
# and prints its findings.  Exit status: 0 no findings, 1 findings, 2 the lint
# itself failed (configure error, compile error, missing plugin).
#
# Environment: CLANG_TIDY (default clang-tidy-19), DDPLINT_PLUGIN (default
# <repo>/build/lib/ddplint-tidy.so), DDPLINT_EXAMPLE_BUILD (default
# examples/trainer/build).
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
tidy="${CLANG_TIDY:-clang-tidy-19}"
plugin="${DDPLINT_PLUGIN:-$repo/build/lib/ddplint-tidy.so}"
build="${DDPLINT_EXAMPLE_BUILD:-$here/build}"
files=("$here/train.cpp" "$here/model.cpp")

if [[ ! -f "$plugin" ]]; then
  echo "lint.sh: plugin not found: $plugin (build it: cmake --build $repo/build --target ddplint-tidy)" >&2
  exit 2
fi
generator=()
if [[ ! -f "$build/CMakeCache.txt" ]] && command -v ninja >/dev/null; then
  generator=(-G Ninja)
fi
if ! cmake_log="$(cmake -S "$here" -B "$build" "${generator[@]}" 2>&1)"; then
  echo "$cmake_log" >&2
  echo "lint.sh: configuring the example failed (needs libtorch-dev and libgloo-dev)" >&2
  exit 2
fi

out="$("$tidy" --load "$plugin" --checks='-*,ddp-*' --quiet -p "$build" "$@" "${files[@]}" 2>&1)"
tidy_rc=$?
# clang-tidy prints "N warnings generated." per file: drop that noise.
printf '%s\n' "$out" | grep -v -E '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$'

# A finding is a ddp diagnostic (a warning, or an error under WarningsAsErrors).
findings="$(printf '%s\n' "$out" | grep -c -E ': (warning|error): .*\[ddp-[a-z0-9-]+(,-warnings-as-errors)?\]$')"
# Any other error is a compile error or a tool failure.
if printf '%s\n' "$out" | grep -E ': (error|fatal error): ' | grep -q -v -E '\[ddp-[a-z0-9-]+,-warnings-as-errors\]$'; then
  echo "lint.sh: clang-tidy reported errors (exit $tidy_rc)" >&2
  exit 2
fi
if [[ $tidy_rc -ne 0 && $findings -eq 0 ]]; then
  echo "lint.sh: clang-tidy failed (exit $tidy_rc)" >&2
  exit 2
fi
if [[ $findings -gt 0 ]]; then
  echo "lint.sh: $findings ddplint finding(s)" >&2
  exit 1
fi
echo "lint.sh: no ddplint findings" >&2
exit 0

#!/usr/bin/env bash
# Test: the findings of lint.sh (the clang-tidy plugin) or, with
# LINT=lint-cli.sh, of the ddplint CLI on the example equal expected-findings.txt.
#
# Compares `file:line: check-id` lines (file relative to examples/trainer);
# lines of expected-findings.txt starting with `#` are comments.  Exit 0 when
# the lists are equal and lint.sh reported findings (exit 1); otherwise prints
# a diff and exits 1.  Uses a private build directory, so it may run next to
# lint.sh.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/ddplint-example.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

lint="${LINT:-lint.sh}"
DDPLINT_EXAMPLE_BUILD="$tmp/build" "$here/$lint" >"$tmp/lint.out" 2>"$tmp/lint.err"
rc=$?
if [[ $rc -ne 1 ]]; then
  cat "$tmp/lint.out" "$tmp/lint.err"
  echo "check_expected.sh: $lint exited $rc, expected 1 (findings)" >&2
  exit 1
fi
sed -n -E 's#^(.*/)?([^/:]+):([0-9]+):[0-9]+: (warning|error|note): .*\[(ddp-[a-z0-9-]+)(,-warnings-as-errors)?\]$#\2:\3: \5#p' \
  "$tmp/lint.out" | LC_ALL=C sort >"$tmp/actual"
expected=("$here/expected-findings.txt")
# The CLI lints train.py too (the plugin reads C++ only).
[[ "$lint" == lint-cli.sh ]] && expected+=("$here/expected-findings-python.txt")
cat "${expected[@]}" | grep -v -E '^[[:space:]]*(#|$)' | LC_ALL=C sort >"$tmp/expected"
if ! diff -u "$tmp/expected" "$tmp/actual" >"$tmp/diff"; then
  echo "check_expected.sh: findings differ from expected-findings.txt (- expected, + actual):" >&2
  cat "$tmp/diff" >&2
  exit 1
fi
echo "check_expected.sh: $(wc -l <"$tmp/actual") findings, as expected"

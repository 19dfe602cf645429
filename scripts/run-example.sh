#!/usr/bin/env bash
# The README's setup-and-run command: install, build, and lint the bundled
# example trainer (examples/trainer) with the ddplint CLI, printing every finding.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh -DDDPLINT_BUILD_HARNESS=OFF
set +e
bash examples/trainer/lint-cli.sh
rc=$?
set -e
if [ "$rc" -eq 1 ]; then
  echo "run-example: ddplint found the bugs planted in examples/trainer (exit 1 = findings)"
  exit 0
fi
echo "run-example: unexpected exit code $rc from examples/trainer/lint-cli.sh" >&2
exit 1

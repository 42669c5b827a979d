#!/usr/bin/env bash
# The README's test command: installs what is missing, then runs the whole
# test suite (bazel test //...) and ends with one "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh || exit 1

log=$(mktemp)
bazel test //... --test_summary=short "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
passed=$(grep -cE '^//\S+\s+(\(cached\) )?PASSED' "$log")
failed=$(grep -cE '^//\S+\s+(\(cached\) )?(FAILED|TIMEOUT|FLAKY|INCOMPLETE|NO STATUS)' "$log")
skipped=$(grep -cE '^//\S+\s+SKIPPED' "$log")
rm -f "$log"
echo "${passed} passed, ${failed} failed, ${skipped} skipped"
if ((rc == 0 && failed > 0)); then rc=1; fi
exit "$rc"

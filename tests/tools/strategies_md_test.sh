#!/usr/bin/env bash
# docs/STRATEGIES.md's registry table is what tools/strategies_md.py makes
# of the worker's own --list_strategies: a strategy registered, renamed or
# given another option without the page regenerated fails here, naming the
# command that regenerates it. And the script refuses a page without its
# markers.
set -euo pipefail
R="${TEST_SRCDIR}/ringside"
python3 "$R/tools/strategies_md.py" "$R/worker/worker" --check "$R/docs/STRATEGIES.md"
bad="$(mktemp)"
echo "# no markers" > "$bad"
if python3 "$R/tools/strategies_md.py" "$R/worker/worker" --check "$bad" 2>"$bad.err"; then
  echo "FAIL: a page without markers passed" >&2; exit 1
fi
grep -q "markers" "$bad.err" || { echo "FAIL: no word of the markers" >&2; cat "$bad.err" >&2; exit 1; }
echo PASS

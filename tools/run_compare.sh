#!/usr/bin/env bash
# The README's main job: installs what is missing, builds, and runs the
# side-by-side comparison: the baseline once, then every registered strategy
# at 1, 2 and 4 workers on the MLP; tables, CSV, JSON and gnuplot PNGs go to
# out/ (see docs/COMPARE.md). Flags pass through, e.g. --workers=2,4 --steps=60
# --out_dir=out, --preset=comm_bound, --results_md=docs/RESULTS.md; after
# --: worker flags.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
source tools/cpu_config.sh
mapfile -t cpu_config < <(ringside_cpu_config)
exec bazel run "${cpu_config[@]}" //experiments:compare -- "$@"

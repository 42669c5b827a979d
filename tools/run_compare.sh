#!/usr/bin/env bash
# The README's main job: installs what is missing, builds, and runs the
# side-by-side comparison of every registered strategy (flags pass through,
# e.g. --workers=4 --steps=60 --out_dir=out).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
exec bazel run //experiments:compare -- "$@"

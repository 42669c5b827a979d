#!/usr/bin/env bash
# Builds predict and runs experiments/validation/validate_published.py: the
# cost model against published multi-GPU measurements (one file a result in
# experiments/validation/), per row and overall median and max |error|.
# Needs no GPU and no network; about a minute on 2 cores once built.
#   tools/validate_published.sh [--json_out=F] [--markdown_out=F]
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
source tools/cpu_config.sh
mapfile -t cpu_config < <(ringside_cpu_config)
bazel build "${cpu_config[@]}" //experiments:predict
exec python3 experiments/validation/validate_published.py \
  --predict="$(bazel info "${cpu_config[@]}" bazel-bin 2>/dev/null)/experiments/predict" "$@"

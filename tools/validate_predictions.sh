#!/usr/bin/env bash
# Builds compare and runs experiments/bench/validate_predictions.py: the
# cost model's predictions against runs on configurations drawn from a
# seeded generator (by default a seed derived from the checked-out commit,
# printed in the output). Needs root and network namespaces (shaped links).
#   tools/validate_predictions.sh [--configs=12] [--seed=N] [--json_out=F]
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
source tools/cpu_config.sh
mapfile -t cpu_config < <(ringside_cpu_config)
bazel build "${cpu_config[@]}" //experiments:compare //worker:worker //server:ps_server
exec python3 experiments/bench/validate_predictions.py \
  --bin_dir="$(bazel info "${cpu_config[@]}" bazel-bin 2>/dev/null)" "$@"

#!/usr/bin/env bash
# Builds what experiments/bench/parity_bench.py measures and runs it: every
# ringside component beside the reference a user would pick instead (PyTorch
# eager, PyTorch DDP, a plain TCP stream), rounds interleaved, as ratios.
#   tools/parity_bench.sh --torch_python=$HOME/torchenv/bin/python --rounds=3
# Without torch in --torch_python (default python3) the PyTorch pairs say
# "not run" and why; the parameter-server pair still runs.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
source tools/cpu_config.sh
mapfile -t cpu_config < <(ringside_cpu_config)
bazel build "${cpu_config[@]}" //worker:worker //experiments:compare //experiments:launch \
  //experiments/bench:transport_bench //experiments/bench:charlm_bench
exec python3 experiments/bench/parity_bench.py --bin_dir="$(bazel info bazel-bin)" "$@"

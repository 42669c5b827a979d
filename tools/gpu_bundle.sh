#!/usr/bin/env bash
# Builds the CUDA configuration here and packs what tools/gpu_check.sh runs
# into one archive, for a GPU machine with a driver and CUDA but without
# Bazel, network or ringside's Debian libraries:
#   tools/gpu_bundle.sh [--out=.gpu_bundle/ringside_gpu.tar.xz]
# then, there:  tools/gpu_check.sh --bundle=.gpu_bundle/ringside_gpu.tar.xz
# The archive holds every test tagged "gpu", compare, charlm_bench,
# input_bench and the worker (for experiments/bench/gpu_compute_bench.py),
# each with its runfiles, and the shared libraries they load that such a
# machine lacks (tools/gpu_bundle.py says which it leaves to the machine).
# .gpu_bundle/ is ignored by git. Exit 0 when written, 1 when the build or
# the packing failed, 2 on a bad flag.
set -uo pipefail
cd "$(dirname "$0")/.."

out=.gpu_bundle/ringside_gpu.tar.xz
for arg in "$@"; do
  case "$arg" in
    --out=*) out=${arg#*=} ;;
    *) echo "gpu_bundle: unknown flag ${arg} (--out=FILE)" >&2; exit 2 ;;
  esac
done

source tools/cpu_config.sh
# The bundle runs on another machine: x86-64-v3 even where this CPU has
# AVX-512.
mapfile -t cpu_config < <(ringside_cpu_config | grep -vx -- --config=avx512)
bazel_cuda=(bazel --output_base="${HOME}/.cache/bazel_cuda")
cuda_flags=(--config=cuda "${cpu_config[@]}")

mapfile -t labels < <("${bazel_cuda[@]}" query \
  'attr(tags, "\bgpu\b", tests(//tests/...))' 2>/dev/null)
if ((${#labels[@]} == 0)); then
  echo "gpu_bundle: bazel query found no test tagged gpu" >&2; exit 1
fi
labels+=(//experiments:compare //experiments/bench:charlm_bench
        //experiments/bench:input_bench //worker:worker)
echo "gpu_bundle: building ${#labels[@]} targets with --config=cuda"
"${bazel_cuda[@]}" build "${cuda_flags[@]}" "${labels[@]}" || exit 1
bin=$("${bazel_cuda[@]}" info "${cuda_flags[@]}" bazel-bin) || exit 1
mkdir -p "$(dirname "$out")"
python3 tools/gpu_bundle.py --bazel_bin="$bin" --out="$out" \
  --commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(
    git diff --quiet 2>/dev/null || echo '+uncommitted')" "${labels[@]}"

#!/usr/bin/env bash
# One command to check ringside's GPU path on a machine with an NVIDIA GPU:
#   tools/gpu_check.sh [--torch_python=python3] [--out=docs/GPU_RESULTS.md]
#                      [--bundle=FILE.tar.xz] [--logs=DIR]
#
# 1. refuses, exit 2, where no NVIDIA GPU answers (nvidia-smi -L);
# 2. builds the CUDA configuration (bazel --config=cuda, its own output base
#    as in tools/run_tests.sh) and runs every test tagged "gpu" with
#    RINGSIDE_REQUIRE_GPU=1, so a GPU case that cannot use the GPU fails
#    instead of skipping (tests/testing/gpu_skip.h); cases needing more GPUs
#    than the machine has stay skipped, and are listed as such;
# 3. runs compare --device=cuda --workers=1 (every strategy that supports
#    CUDA, the baseline and, where torch imports, the PyTorch DDP row), and
#    baseline and ring again with --precision=bf16 (the DDP row under
#    autocast);
# 3c. runs the study's table with real compute (compare
#    --preset=study_gpt2_gpu, short windows: a GPT-2-small-shaped
#    transformer, one GPU per worker) and tools/study_table.py on it: a
#    machine with fewer than 4 GPUs runs the fp32 and bf16 baselines and
#    lists the rest as not run;
# 4. runs the GPU compute benchmark where torch imports
#    (experiments/bench/gpu_compute_bench.py: one CUDA worker's step,
#    MLP sizes and the character transformer at n_embd 256-768, against
#    PyTorch eager fp32, eager bf16 autocast and torch.compile on the same
#    GPU, in interleaved rounds; and gradient accumulation's gain);
# 4a. runs contention_bench where torch imports (experiments/bench/
#    contention_bench.py: compute slowed beside a collective, sigma, and
#    DDP's fixed cost a step, f, as the lines a cluster file takes);
# 4b. runs input_bench: the host's side of a CUDA worker's input (a batch
#    read and staged a step), one thread against ParallelCopy's threads;
# 5. runs charlm_bench on the GPU beside PyTorch eager on the same GPU
#    (6 layers, block 128, n_embd 256, 512 and 768);
# 6. writes --out (default docs/GPU_RESULTS.md): the GPU, driver, CUDA and
#    commit, the test counts with every failed and skipped case, the bf16
#    distances the GPU tests printed, and the tables as printed.
# With --bundle (an archive from tools/gpu_bundle.sh, built on another
# machine) it builds nothing and needs neither Bazel nor apt: it runs the
# archive's binaries, with its libraries and the machine's own CUDA, cuBLAS
# and NCCL (from /usr/local/cuda or the torch_python's NVIDIA wheels), the
# tests several at a time, each step under a time limit. --logs=DIR keeps
# every step's log there.
# Exit 0 when every step passed, 1 when one failed (the file says which),
# 2 without a GPU or on a bad flag.
set -uo pipefail
cd "$(dirname "$0")/.."

torch_python=python3
out=docs/GPU_RESULTS.md
bundle=
logs=
for arg in "$@"; do
  case "$arg" in
    --torch_python=*) torch_python=${arg#*=} ;;
    --out=*) out=${arg#*=} ;;
    --bundle=*) bundle=${arg#*=} ;;
    --logs=*) logs=${arg#*=} ;;
    *) echo "gpu_check: unknown flag ${arg} (--torch_python=PY, --out=FILE," \
            "--bundle=FILE, --logs=DIR)" >&2
       exit 2 ;;
  esac
done

if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "gpu_check: no NVIDIA GPU here: nvidia-smi is not installed." \
       "Run this on a machine with an NVIDIA GPU and its driver." >&2
  exit 2
fi
if ! gpus=$(nvidia-smi -L 2>&1) || ! grep -q '^GPU ' <<<"$gpus"; then
  echo "gpu_check: no NVIDIA GPU here: nvidia-smi -L says: ${gpus}" >&2
  exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
step() { echo "gpu_check: $*"; }
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(
  git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"

if [[ -z "$bundle" ]]; then
  tools/setup.sh || exit 1
  source tools/cpu_config.sh
  mapfile -t cpu_config < <(ringside_cpu_config)
  bazel_cuda=(bazel --output_base="${HOME}/.cache/bazel_cuda")
  cuda_flags=(--config=cuda "${cpu_config[@]}")
  run_compare() { "${bazel_cuda[@]}" run "${cuda_flags[@]}" //experiments:compare -- "$@"; }
  run_charlm_bench() {
    "${bazel_cuda[@]}" run "${cuda_flags[@]}" //experiments/bench:charlm_bench -- "$@"
  }
  run_input_bench() {
    "${bazel_cuda[@]}" run "${cuda_flags[@]}" //experiments/bench:input_bench -- "$@"
  }
  worker_binary() {
    "${bazel_cuda[@]}" build "${cuda_flags[@]}" //worker:worker >&2 &&
      echo "$("${bazel_cuda[@]}" info "${cuda_flags[@]}" bazel-bin)/worker/worker"
  }
  # 2. The GPU tests, skips turned into failures.
  step "bazel test --config=cuda --test_tag_filters=gpu" \
       "--test_env=RINGSIDE_REQUIRE_GPU=1 //tests/..."
  "${bazel_cuda[@]}" test "${cuda_flags[@]}" --test_tag_filters=gpu \
    --test_env=RINGSIDE_REQUIRE_GPU=1 --test_output=errors \
    --test_summary=short //tests/... 2>&1 | tee "$work/test.log"
  test_rc=${PIPESTATUS[0]}
  testlogs=$("${bazel_cuda[@]}" info "${cuda_flags[@]}" bazel-testlogs)
else
  step "unpacking ${bundle}"
  tar -xJf "$bundle" -C "$work" || { echo "gpu_check: cannot unpack ${bundle}" >&2; exit 2; }
  root="$work/ringside_gpu"
  commit="$(awk '$1 == "commit" {print $2}' "$root/manifest.txt") (from ${bundle})"
  # CUDA's libraries from the machine: its toolkit, else the NVIDIA wheels
  # of the torch_python.
  lib_path="$root/lib"
  wheels=$("$torch_python" -c 'import nvidia, os; print(" ".join(nvidia.__path__))' 2>/dev/null)
  for soname in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libnccl.so.2; do
    found=$(find -L /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
              /usr/lib/x86_64-linux-gnu $wheels -maxdepth 3 -name "$soname" 2>/dev/null | head -n 1)
    if [[ -z "$found" ]]; then
      echo "gpu_check: ${soname} is on neither /usr/local/cuda nor the NVIDIA wheels of ${torch_python}" >&2
      exit 2
    fi
    step "${soname}: ${found}"
    lib_path="${lib_path}:$(dirname "$found")"
  done
  export LD_LIBRARY_PATH="${lib_path}${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}"
  binary_of() { awk -v l="$1" '$1 == "binary" && $2 == l {print $3}' "$root/manifest.txt"; }
  run_compare() { timeout 220 "$root/$(binary_of //experiments:compare)" "$@"; }
  run_charlm_bench() { timeout 150 "$root/$(binary_of //experiments/bench:charlm_bench)" "$@"; }
  run_input_bench() { timeout 60 "$root/$(binary_of //experiments/bench:input_bench)" "$@"; }
  worker_binary() { echo "$root/$(binary_of //worker:worker)"; }
  # 2. The GPU tests, skips turned into failures, all at once, written
  # as bazel's summary lines and test.xml files for test_case_counts.py.
  step "the bundle's GPU tests with RINGSIDE_REQUIRE_GPU=1, all at once"
  testlogs="$work/testlogs"
  run_one_test() {  # label path: runs one test binary, prints its summary line
    local label=$1 bin="$root/$2" rel=${1#//}
    rel=${rel/://}
    mkdir -p "$testlogs/$rel"
    local tmp; tmp=$(mktemp -d)
    TEST_SRCDIR="$bin.runfiles" RUNFILES_DIR="$bin.runfiles" TEST_TMPDIR="$tmp" \
      TEST_WORKSPACE=ringside RINGSIDE_REQUIRE_GPU=1 OMP_NUM_THREADS=1 \
      timeout 200 "$bin" --gtest_output="xml:$testlogs/$rel/test.xml" \
      > "$testlogs/$rel/test.log" 2>&1
    local rc=$?
    if ((rc == 0)); then echo "$label PASSED"; else
      echo "$label FAILED (exit ${rc}; log:)"; tail -n 40 "$testlogs/$rel/test.log"; fi
  }
  export -f run_one_test; export root testlogs
  awk '$1 == "binary" && $2 ~ "^//tests/" {print $2, $3}' "$root/manifest.txt" |
    xargs -P 16 -L 1 bash -c 'run_one_test "$0" "$1"' 2>&1 | tee "$work/test.log"
  test_rc=0
  grep -q ' FAILED' "$work/test.log" && test_rc=1
fi
python3 tools/test_case_counts.py "$testlogs" < "$work/test.log" \
  > "$work/counts.txt"
counts_rc=$?
cat "$work/counts.txt"
if ((test_rc != 0 || counts_rc != 0)); then status=1; tests="FAILED"; else tests="passed"; fi

# 3. The comparison on the GPU, one worker per strategy.
step "compare --device=cuda --workers=1"
run_compare --device=cuda --workers=1 --out_dir="$work/compare" --plots=false \
  --torch_python="$torch_python" --results_md="$work/compare.md" \
  2>&1 | tee "$work/compare.log"
if ((PIPESTATUS[0] != 0)); then status=1; compare="FAILED"; else compare="passed"; fi
# 3b. The same in bf16 mixed precision (the MLP; the DDP row under autocast).
step "compare --device=cuda --workers=1 --strategies=baseline,ring -- --precision=bf16"
run_compare --device=cuda --workers=1 --strategies=baseline,ring \
  --out_dir="$work/compare_bf16" --plots=false --torch_python="$torch_python" \
  --results_md="$work/compare_bf16.md" -- --precision=bf16 \
  2>&1 | tee "$work/compare_bf16.log"
if ((PIPESTATUS[0] != 0)); then status=1; compare_bf16="FAILED"; else compare_bf16="passed"; fi

# 3c. The study's table with real compute: what this machine's GPUs fit.
step "compare --preset=study_gpt2_gpu (short windows) and tools/study_table.py"
run_compare --preset=study_gpt2_gpu --preset_dir="$PWD/experiments/presets" \
  --steps=12 --warmup_steps=3 --min_window_steps=5 --min_window_s=1 \
  --repeats=1 --out_dir="$work/study_gpu" --plots=false \
  --torch_python="$torch_python" 2>&1 | tee "$work/study_gpu.log"
if ((PIPESTATUS[0] != 0)) ||
   ! python3 tools/study_table.py "$work/study_gpu" > "$work/study_gpu.md"; then
  status=1; study_gpu="FAILED"
else
  study_gpu="passed"
fi

# 4. One worker's compute against PyTorch's three references.
if "$torch_python" -c 'import torch' >/dev/null 2>&1; then
  step "gpu_compute_bench: the worker's step beside PyTorch (${torch_python})"
  worker=$(worker_binary)
  timeout 420 "$torch_python" experiments/bench/gpu_compute_bench.py \
    --worker="$worker" --out="$work/compute.md" 2>&1 | tee "$work/compute.log"
  if ((PIPESTATUS[0] != 0)); then status=1; computed="FAILED"; else computed="passed"; fi
else
  computed="not run: torch does not import in ${torch_python}"
fi

# 4a. The cost model's terms beside nominal links, on this machine's GPUs:
# compute slowed by a collective beside it (sigma) and DDP's fixed cost a
# step (f), the cluster-file lines predict --cluster takes.
if "$torch_python" -c 'import torch' >/dev/null 2>&1; then
  step "contention_bench: sigma and f on this machine's GPUs (${torch_python})"
  timeout 300 "$torch_python" experiments/bench/contention_bench.py \
    --device=cuda --out="$work/contention.txt" 2>&1 | tee "$work/contention.log"
  if ((PIPESTATUS[0] != 0)); then status=1; contention="FAILED"; else contention="passed"; fi
else
  contention="not run: torch does not import in ${torch_python}"
fi

# 4b. The host's side of a CUDA worker's input (no GPU): one thread against
# ParallelCopy's threads, on this machine's cores.
step "input_bench: the host's per-step input read and staging"
run_input_bench --rounds=3 --steps=20 2>&1 | tee "$work/input.log"
if ((PIPESTATUS[0] != 0)); then status=1; inputs="FAILED"; else inputs="passed"; fi

# 5. The character transformer on the GPU beside PyTorch eager.
step "charlm_bench on the GPU beside PyTorch eager (${torch_python})"
run_charlm_bench --cpu=false --cuda=true --python="$torch_python" \
  --n_embd=256,512,768 --n_layer=6 --block_size=128 --batch_size=32 \
  2>&1 | tee "$work/charlm.log"
if ((PIPESTATUS[0] != 0)); then status=1; charlm="FAILED"; else charlm="passed"; fi
[[ -z "$bundle" ]] && { "${bazel_cuda[@]}" shutdown >/dev/null 2>&1 || true; }
if [[ -n "$logs" ]]; then
  mkdir -p "$logs" && cp -r "$work"/*.log "$work/counts.txt" "$testlogs" "$logs"/ 2>/dev/null
  [[ -d "$work/compare" ]] && cp -r "$work/compare" "$logs"/
  [[ -d "$work/study_gpu" ]] && cp -r "$work/study_gpu" "$logs"/
fi

# 6. The results file.
table_of() {  # the Markdown table lines of a log, or what is there
  if grep -q '^|' "$1"; then grep '^|' "$1"; else echo '```'; tail -n 20 "$1"; echo '```'; fi
}
{
  echo "# GPU results"
  echo
  echo "Written by \`tools/gpu_check.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC')," \
       "commit ${commit}."
  echo
  echo "| | |"
  echo "|---|---|"
  nvidia-smi --query-gpu=index,name,driver_version,memory.total \
    --format=csv,noheader | sed 's/^/| GPU | /; s/$/ |/'
  echo "| CUDA | $(nvcc --version 2>/dev/null | grep -o 'release [0-9.]*' || echo 'nvcc not found') |"
  echo "| host CPU | $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores |"
  echo "| torch | $("$torch_python" -c 'import torch; print(torch.__version__)' 2>/dev/null || echo "not importable in ${torch_python}") |"
  echo
  echo "## GPU tests: ${tests}"
  echo
  if [[ -z "$bundle" ]]; then
    echo "\`bazel test --config=cuda --test_tag_filters=gpu --test_env=RINGSIDE_REQUIRE_GPU=1 //tests/...\`"
  else
    echo "Every test tagged gpu, from the bundle (tools/gpu_bundle.sh), with RINGSIDE_REQUIRE_GPU=1"
  fi
  echo "(a case that cannot use the GPU fails; one that needs more GPUs than"
  echo "this machine has is skipped and listed)."
  echo
  echo '```'
  cat "$work/counts.txt"
  echo '```'
  echo
  echo "### bf16 against the CPU's bf16 and float32, as the GPU tests measured it"
  echo
  echo "(relative L2; the bounds the tests declare come from the same measures"
  echo "on the CPU: tests/models/mlp_test.cc, charlm_test.cc, tests/worker/bf16_oracle_test.cc)"
  echo
  echo '```'
  grep -h -r --include=test.log -E '^(gpu bf16|gpu charlm bf16|gpu oracle)' \
    "$testlogs" 2>/dev/null | sort || true
  echo '```'
  echo
  echo "## compare --device=cuda --workers=1: ${compare}"
  echo
  if [[ -s "$work/compare.md" ]]; then cat "$work/compare.md"; else table_of "$work/compare.log"; fi
  echo
  echo "## compare --device=cuda --workers=1 -- --precision=bf16: ${compare_bf16}"
  echo
  if [[ -s "$work/compare_bf16.md" ]]; then cat "$work/compare_bf16.md"; else table_of "$work/compare_bf16.log"; fi
  echo
  echo "## The study's table with real compute (compare --preset=study_gpt2_gpu, short windows): ${study_gpu}"
  echo
  echo "A GPT-2-small-shaped character transformer (12 layers, d_model 768,"
  echo "context 1024, 8 sequences a GPU), each worker on a GPU of its own; rows"
  echo "needing more GPUs than this machine has are listed as not run."
  echo
  if [[ -s "$work/study_gpu.md" ]]; then cat "$work/study_gpu.md"; else table_of "$work/study_gpu.log"; fi
  echo
  echo "## gpu_compute_bench: the worker's step beside PyTorch: ${computed}"
  echo
  if [[ -s "$work/compute.md" ]]; then cat "$work/compute.md"
  elif [[ -s "$work/compute.log" ]]; then table_of "$work/compute.log"; fi
  echo
  echo "## contention_bench: sigma and f for a cluster file: ${contention}"
  echo
  echo '```'
  if [[ -s "$work/contention.txt" ]]; then cat "$work/contention.txt"
  elif [[ -s "$work/contention.log" ]]; then tail -n 10 "$work/contention.log"; fi
  echo '```'
  echo
  echo "## input_bench: the host's per-step input (read and staging): ${inputs}"
  echo
  table_of "$work/input.log"
  echo
  echo "## charlm_bench on the GPU beside PyTorch eager: ${charlm}"
  echo
  table_of "$work/charlm.log"
} > "$out"
step "wrote ${out}; tests ${tests}, compare ${compare}, study ${study_gpu}, compute bench ${computed}, contention_bench ${contention}, input_bench ${inputs}, charlm_bench ${charlm}"
exit "$status"

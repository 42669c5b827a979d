#!/usr/bin/env bash
# The README's test command: installs what is missing, then runs the whole
# test suite (bazel test //...), lists the skipped test cases with their
# reasons, and ends with one "N passed, N failed, N skipped" line counting
# test cases from every target's test.xml (tools/test_case_counts.py), so a
# target whose cases all skipped is not a pass.
# The tests tagged "asan" (memory lifetimes across threads) run a second
# time built with AddressSanitizer (--config=asan, its own output tree);
# their cases count under "TARGET [asan]".
# Where nvcc is present it then also compiles the CUDA configuration
# (bazel build --config=cuda //..., no GPU needed) in its own output base,
# so a CUDA build break fails the run even on machines without a GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh || exit 1
source tools/cpu_config.sh
mapfile -t cpu_config < <(ringside_cpu_config)

log=$(mktemp)
bazel test "${cpu_config[@]}" //... --test_summary=short "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
testlogs=$(bazel info "${cpu_config[@]}" bazel-testlogs 2>/dev/null)
asan_log=$(mktemp)
echo "run_tests: the tests tagged asan, built with AddressSanitizer:" \
     "bazel test --config=asan --test_tag_filters=asan //..."
bazel test "${cpu_config[@]}" --config=asan --build_tests_only \
  --test_tag_filters=asan //... --test_summary=short "$@" 2>&1 | tee "$asan_log"
asan_rc=${PIPESTATUS[0]}
asan_testlogs=$(bazel info "${cpu_config[@]}" --config=asan bazel-testlogs 2>/dev/null)
counts=$(python3 tools/test_case_counts.py "$testlogs" < "$log" \
  --also asan "$asan_testlogs" "$asan_log")
counts_rc=$?
rm -f "$log" "$asan_log"
if ((asan_rc != 0)); then rc=1; fi
echo "$counts" | sed '$d'
if ((rc == 0 && counts_rc != 0)); then rc=1; fi

# The CUDA configuration: its own output base (a --config=cuda build in the
# default one would evict the CPU build's cache); it makes no convenience
# links (.bazelrc).
# Its target patterns: //..., unless this checkout has a convenience link
# (bazel-<folder>, made by the CPU build) that .bazelignore does not list:
# Bazel under another output base would walk into it. Then every top-level
# folder with a BUILD file instead: the same targets.
cuda_targets() {
  local d
  for d in bazel-*; do
    if [[ -L "$d" ]] && ! grep -qxF "$d" .bazelignore 2>/dev/null; then
      echo "//:all"
      for d in */; do
        d=${d%/}
        [[ -L "$d" ]] && continue
        [[ -n $(find "$d" \( -name BUILD -o -name BUILD.bazel \) -print -quit) ]] &&
          echo "//${d}/..."
      done
      return
    fi
  done
  echo "//..."
}
nvcc=""
if [[ -x /usr/local/cuda/bin/nvcc ]]; then
  nvcc=/usr/local/cuda/bin/nvcc
elif command -v nvcc >/dev/null 2>&1; then
  nvcc=$(command -v nvcc)
fi
if [[ -z "$nvcc" ]]; then
  cuda="not checked (no nvcc here)"
  echo "run_tests: note: no nvcc (/usr/local/cuda/bin/nvcc or on PATH):" \
       "skipping the CUDA build (bazel build --config=cuda //...)"
else
  cuda_base="${HOME}/.cache/bazel_cuda"
  mapfile -t targets < <(cuda_targets)
  echo "run_tests: compiling the CUDA configuration with ${nvcc}:" \
       "bazel --output_base=${cuda_base} build --config=cuda ${targets[*]}"
  # Its compiler output (thousands of lines of Eigen's warnings) goes to a
  # log, shown only when the build fails, so the run's last lines stay its
  # results.
  cuda_log=$(mktemp)
  if bazel --output_base="$cuda_base" build --config=cuda "${cpu_config[@]}" -- "${targets[@]}" >"$cuda_log" 2>&1; then
    cuda="built"
    grep -E "^(INFO: (Elapsed|Build completed)|ERROR)" "$cuda_log" | tail -n 3
  else
    cuda="FAILED"
    tail -n 200 "$cuda_log"
    echo "run_tests: FAILED: the CUDA configuration does not compile" \
         "(bazel --output_base=${cuda_base} build --config=cuda //...;" \
         "its last 200 lines above)"
    rc=1
  fi
  rm -f "$cuda_log"
  # Its server is not needed any more: free its memory.
  bazel --output_base="$cuda_base" shutdown >/dev/null 2>&1 || true
fi
# The failed cases once more, next to the totals, where a reader of the
# run's last lines looks.
echo "$counts" | awk '/^run_tests: failed test cases/ {on = 1; print; next}
                      on && /^  / {print; next} {on = 0}'
echo "$(echo "$counts" | tail -n 1); CUDA build: ${cuda}"
exit "$rc"

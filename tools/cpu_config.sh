# Sourced by tools/run_tests.sh and tools/run_compare.sh.
# The default build targets x86-64-v3 (.bazelrc: AVX2, FMA, F16C, BMI1/2,
# MOVBE, LZCNT ("abm" in /proc/cpuinfo));
# ringside_cpu_config prints --config=portable (baseline x86-64, slower
# compute) when this CPU lacks any of those, --config=avx512 (x86-64-v4)
# when it also has AVX-512 F, BW, CD, DQ and VL, and nothing otherwise.
ringside_cpu_config() {
  local flags f
  flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
  for f in avx avx2 fma f16c bmi1 bmi2 movbe abm; do
    if [[ "$flags" != *" $f "* ]]; then
      echo "note: this CPU lacks $f: building with --config=portable" \
           "(baseline x86-64, slower compute)" >&2
      echo "--config=portable"
      return
    fi
  done
  for f in avx512f avx512bw avx512cd avx512dq avx512vl; do
    [[ "$flags" == *" $f "* ]] || return 0
  done
  echo "--config=avx512"
}

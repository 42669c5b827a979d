// The start-up check of the instruction set every ringside binary is built
// for. The default build targets x86-64-v3 (.bazelrc: AVX2 and FMA, so that
// Eigen's 8-wide FMA kernels run; --config=avx512, x86-64-v4, where the CPU
// has AVX-512); on a CPU without those instructions the
// first one executed would kill the process with SIGILL and no word of why.
// This constructor runs before every other static initializer of the binary
// (priority 101; .init_array entries are sorted by priority), is itself
// compiled for baseline x86-64 (the target attribute), and refuses to go on
// with a message naming the missing instructions and the portable build.
//
// It is linked into every binary and test through @system//:absl, which all
// of them depend on (third_party/system.BUILD).
//
// No libc string function here: under -c opt (_FORTIFY_SOURCE) glibc's
// always-inline wrappers, compiled for the build's -march, cannot inline
// into a function compiled for baseline x86-64, and the file fails to build.
#include <unistd.h>

#include <cstddef>

#if defined(__x86_64__) && defined(__GNUC__)

namespace {

__attribute__((target("arch=x86-64"))) size_t Length(const char* text) {
  size_t n = 0;
  while (text[n] != '\0') ++n;
  return n;
}

// Appends " " and `name` to `out` (size `cap`, truncating) when `missing`.
__attribute__((target("arch=x86-64"))) void Note(bool missing,
                                                 const char* name, char* out,
                                                 size_t cap) {
  if (!missing) return;
  size_t end = Length(out);
  if (end + 1 < cap) out[end++] = ' ';
  for (size_t i = 0; name[i] != '\0' && end + 1 < cap; ++i) {
    out[end++] = name[i];
  }
  out[end] = '\0';
}

__attribute__((constructor(101), target("arch=x86-64"))) void
RingsideCheckCpu() {
  __builtin_cpu_init();
  char missing[128] = "";
  constexpr size_t kCap = sizeof(missing);
  // Only what this build was compiled to use (the macros come from -march).
#if defined(__AVX__)
  Note(!__builtin_cpu_supports("avx"), "avx", missing, kCap);
#endif
#if defined(__AVX2__)
  Note(!__builtin_cpu_supports("avx2"), "avx2", missing, kCap);
#endif
#if defined(__FMA__)
  Note(!__builtin_cpu_supports("fma"), "fma", missing, kCap);
#endif
#if defined(__F16C__)
  Note(!__builtin_cpu_supports("f16c"), "f16c", missing, kCap);
#endif
#if defined(__BMI__)
  Note(!__builtin_cpu_supports("bmi"), "bmi", missing, kCap);
#endif
#if defined(__BMI2__)
  Note(!__builtin_cpu_supports("bmi2"), "bmi2", missing, kCap);
#endif
#if defined(__MOVBE__)
  Note(!__builtin_cpu_supports("movbe"), "movbe", missing, kCap);
#endif
#if defined(__LZCNT__)
  Note(!__builtin_cpu_supports("lzcnt"), "lzcnt", missing, kCap);
#endif
#if defined(__AVX512F__)
  Note(!__builtin_cpu_supports("avx512f"), "avx512f", missing, kCap);
#endif
  if (missing[0] == '\0') return;
#if defined(__AVX512F__)
  static const char kHead[] =
      "ringside: this binary was built for x86-64-v4 (AVX-512; "
      "--config=avx512 in .bazelrc) but this CPU lacks:";
  static const char kTail[] =
      "\nringside: rebuild for this CPU without --config=avx512 (x86-64-v3, "
      "the default), or with --config=portable where it lacks AVX2 too; "
      "tools/run_tests.sh and tools/run_compare.sh choose by themselves.\n";
#else
  static const char kHead[] =
      "ringside: this binary was built for x86-64-v3 (AVX2, FMA; the default "
      "in .bazelrc) but this CPU lacks:";
  static const char kTail[] =
      "\nringside: rebuild for this CPU with --config=portable (e.g. bazel "
      "build --config=portable //...; tools/run_tests.sh and "
      "tools/run_compare.sh choose it by themselves), slower compute.\n";
#endif
  ssize_t ignored = write(2, kHead, sizeof(kHead) - 1);
  ignored = write(2, missing, Length(missing));
  ignored = write(2, kTail, sizeof(kTail) - 1);
  (void)ignored;
  _exit(70);  // EX_SOFTWARE-like: not a crash, not a usage error
}

}  // namespace

#endif  // __x86_64__ && __GNUC__

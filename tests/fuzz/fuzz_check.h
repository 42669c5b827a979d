// FUZZ_CHECK: an invariant of a fuzz target. On failure prints the condition
// and a message to stderr and aborts, which libFuzzer and the standalone
// driver (tests/fuzz/standalone_fuzz_main.cc) report as a crash, keeping the
// input that caused it.
#ifndef RINGSIDE_TESTS_FUZZ_FUZZ_CHECK_H_
#define RINGSIDE_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond, ...)                                             \
  do {                                                                    \
    if (!(cond)) {                                                        \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: ", __FILE__,    \
                   __LINE__, #cond);                                      \
      std::fprintf(stderr, __VA_ARGS__);                                  \
      std::fprintf(stderr, "\n");                                         \
      std::abort();                                                       \
    }                                                                     \
  } while (0)

#endif  // RINGSIDE_TESTS_FUZZ_FUZZ_CHECK_H_

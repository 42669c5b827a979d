#include "common/denormals.h"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace ringside {
namespace {

#if defined(__x86_64__) || defined(__i386__)
constexpr unsigned kFlushToZero = 1u << 15;     // MXCSR.FTZ
constexpr unsigned kDenormalsAreZero = 1u << 6;  // MXCSR.DAZ
#elif defined(__aarch64__)
constexpr unsigned long kFpcrFlushToZero = 1ul << 24;  // FPCR.FZ
#endif

}  // namespace

bool FlushDenormalsToZero() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_setcsr(_mm_getcsr() | kFlushToZero | kDenormalsAreZero);
  return true;
#elif defined(__aarch64__)
  unsigned long fpcr;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
  __asm__ __volatile__("msr fpcr, %0" : : "r"(fpcr | kFpcrFlushToZero));
  return true;
#else
  return false;
#endif
}

bool DenormalsFlushedToZero() {
#if defined(__x86_64__) || defined(__i386__)
  return (_mm_getcsr() & kFlushToZero) != 0;
#elif defined(__aarch64__)
  unsigned long fpcr;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
  return (fpcr & kFpcrFlushToZero) != 0;
#else
  return false;
#endif
}

namespace {

// After cpu_check.cc (101) and malloc_tuning.cc (102), before any static
// initializer that might start a thread.
__attribute__((constructor(103))) void FlushDenormalsBeforeMain() {
  const char* keep = std::getenv("RINGSIDE_DENORMALS");
  if (keep != nullptr && std::strcmp(keep, "keep") == 0) return;
  FlushDenormalsToZero();
}

}  // namespace
}  // namespace ringside

// Every block from the global operator new starts on a 32-byte boundary:
// the width of an AVX register, the packet of Eigen's vectorized kernels in
// the default x86-64-v3 build (.bazelrc); on a 64-byte one in the
// --config=avx512 build, whose packets are AVX-512's.
//
// Why: Eigen's vectorized reductions (sums, norms, dot products over Maps
// of std::vector data) process the elements before the first aligned one
// separately, so where a sum starts its packets depends on the address
// malloc returned. glibc returns 16-byte aligned blocks: with SSE2's 16-byte
// packets that was always aligned, with AVX's 32 it is aligned half the
// time, and two runs of the same step could differ in the last bit. Ranks
// must agree bit for bit (the equivalence oracle, resume tests), so every
// buffer starts aligned and the peeling is the same in every process; a
// tensor at offset k of a flat buffer then has the same alignment wherever
// the buffer lives. The cost is a few bytes per allocation.
//
// Linked into every binary and test through @system//:absl, like
// cpu_check.cc. Aligned (align_val_t) forms keep the library's versions.
#include <cstdlib>
#include <new>

namespace {

#if defined(__AVX512F__)
constexpr std::size_t kAlignment = 64;  // --config=avx512: 16-float packets
#else
constexpr std::size_t kAlignment = 32;
#endif

void* Allocate(std::size_t n) noexcept {
  void* p = nullptr;
  if (posix_memalign(&p, kAlignment, n == 0 ? 1 : n) != 0) return nullptr;
  return p;
}

void* AllocateOrThrow(std::size_t n) {
  while (true) {
    if (void* p = Allocate(n)) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

}  // namespace

void* operator new(std::size_t n) { return AllocateOrThrow(n); }
void* operator new[](std::size_t n) { return AllocateOrThrow(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return Allocate(n);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return Allocate(n);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}

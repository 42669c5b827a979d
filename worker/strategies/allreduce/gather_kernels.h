// The per-element arithmetic of the all-gather compression hooks
// (topk_hook.cc, sign_hook.cc): top-k's selection and sign's packing and
// unpacking of one tensor's part of a bucket. The hooks run them, and the
// calibration times them (experiments/calibration/calibration.h). Pure functions
// of their arguments.
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_GATHER_KERNELS_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_GATHER_KERNELS_H_

#include <cstdint>
#include <cstring>
#include <vector>

namespace ringside {

// An int32 index or 32 bits travelling in a float's slot, and back: the
// same four bytes read as the other type.
template <typename To, typename From>
inline To SameBits(From from) {
  static_assert(sizeof(To) == sizeof(From), "4 bytes each");
  To to;
  std::memcpy(&to, &from, sizeof(to));
  return to;
}
inline float IndexAsFloat(int32_t index) { return SameBits<float>(index); }
inline int32_t FloatAsIndex(float f) { return SameBits<int32_t>(f); }
inline float BitsAsFloat(uint32_t bits) { return SameBits<float>(bits); }
inline uint32_t FloatAsBits(float f) { return SameBits<uint32_t>(f); }

// Writes the k elements of `values` (a part starting at bucket index
// `begin`, `size` elements; 1 <= k) of largest magnitude into `out` as k
// (index, value) pairs: those above the k-th largest magnitude, then those
// equal to it in index order until k (a NaN counts as the largest).
// `magnitude` is scratch. Exact (std::nth_element), O(size).
void SelectTopK(const float* values, int64_t begin, int64_t size, int64_t k,
                std::vector<float>& magnitude, float* out);

// The words of a part of `size` elements: its scale, then ⌈size/32⌉ words
// of bits.
inline int64_t SignWords(int64_t size) { return 1 + (size + 31) / 32; }

// The scale a part's signs carry: EF-SignSGD's mean magnitude ‖e‖₁/size,
// or 1-bit Adam's root mean square ‖e‖₂/√size (DeepSpeed's
// compressed_allreduce).
enum class SignScale { kMeanAbs, kRms };

// Scaled sign compression of one part with error feedback: e += g, s = the
// scale of e, words[0] = s, then the sign bits of e (bit set for e >= 0),
// and e keeps e − s·sign(e).
void PackSigns(const float* g, int64_t size, float* e, float* words,
               SignScale scale = SignScale::kMeanAbs);

// Adds one rank's s·sign (words as PackSigns wrote them) into `out`.
void AddSigns(const float* words, int64_t size, float* out);

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_GATHER_KERNELS_H_

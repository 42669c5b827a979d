#include "worker/strategies/allreduce/gather_kernels.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace ringside {
namespace {

// |v|, a NaN counted as the largest (so the ordering stays strict weak).
float Magnitude(float v) {
  return std::isnan(v) ? std::numeric_limits<float>::infinity()
                       : std::fabs(v);
}

}  // namespace

void SelectTopK(const float* values, int64_t begin, int64_t size, int64_t k,
                std::vector<float>& magnitude, float* out) {
  int64_t taken = 0;
  auto take = [&](int64_t i) {
    out[2 * taken] = IndexAsFloat(static_cast<int32_t>(begin + i));
    out[2 * taken + 1] = values[i];
    ++taken;
  };
  if (k >= size) {
    for (int64_t i = 0; i < size; ++i) take(i);
    return;
  }
  magnitude.resize(size);
  for (int64_t i = 0; i < size; ++i) magnitude[i] = Magnitude(values[i]);
  std::nth_element(magnitude.begin(), magnitude.begin() + (k - 1),
                   magnitude.end(), std::greater<float>());
  const float threshold = magnitude[k - 1];
  for (int64_t i = 0; i < size && taken < k; ++i) {
    if (Magnitude(values[i]) > threshold) take(i);
  }
  for (int64_t i = 0; i < size && taken < k; ++i) {
    if (Magnitude(values[i]) == threshold) take(i);
  }
}

void PackSigns(const float* g, int64_t size, float* e, float* words,
               SignScale rule) {
  double sum = 0;
  for (int64_t i = 0; i < size; ++i) {
    e[i] += g[i];
    sum += rule == SignScale::kMeanAbs
               ? std::fabs(e[i])
               : static_cast<double>(e[i]) * static_cast<double>(e[i]);
  }
  const double mean = sum / static_cast<double>(size);
  const float scale = static_cast<float>(
      rule == SignScale::kMeanAbs ? mean : std::sqrt(mean));
  words[0] = scale;
  for (int64_t w = 0; w * 32 < size; ++w) {
    uint32_t bits = 0;
    const int64_t stop = std::min<int64_t>(32, size - w * 32);
    for (int64_t j = 0; j < stop; ++j) {
      float& v = e[w * 32 + j];
      // sign +1 for v >= 0 (bit set), -1 below; the error keeps v − c.
      if (v >= 0) {
        bits |= uint32_t{1} << j;
        v -= scale;
      } else {
        v += scale;
      }
    }
    words[1 + w] = BitsAsFloat(bits);
  }
}

void AddSigns(const float* words, int64_t size, float* out) {
  const float scale = words[0];
  for (int64_t w = 0; w * 32 < size; ++w) {
    const uint32_t bits = FloatAsBits(words[1 + w]);
    const int64_t stop = std::min<int64_t>(32, size - w * 32);
    for (int64_t j = 0; j < stop; ++j) {
      out[w * 32 + j] += (bits >> j) & 1u ? scale : -scale;
    }
  }
}

}  // namespace ringside

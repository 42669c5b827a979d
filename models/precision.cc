#include "models/precision.h"

#include <Eigen/Core>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace ringside {

absl::StatusOr<Precision> ParsePrecision(absl::string_view text) {
  if (text == "fp32") return Precision::kFp32;
  if (text == "bf16") return Precision::kBf16;
  return absl::InvalidArgumentError(
      absl::StrCat("--precision must be fp32 or bf16, got '", text, "'"));
}

const char* PrecisionName(Precision precision) {
  return precision == Precision::kBf16 ? "bf16" : "fp32";
}

float RoundToBf16(float x) { return static_cast<float>(Eigen::bfloat16(x)); }

void RoundToBf16(absl::Span<const float> in, absl::Span<float> out) {
  if (out.size() < in.size()) {
    std::fprintf(stderr, "RoundToBf16: %zu outputs for %zu inputs\n",
                 out.size(), in.size());
    std::abort();
  }
  for (size_t i = 0; i < in.size(); ++i) out[i] = RoundToBf16(in[i]);
}

}  // namespace ringside

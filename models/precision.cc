#include "models/precision.h"

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

}  // namespace ringside

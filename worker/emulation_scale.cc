#include "worker/emulation_scale.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ringside {

absl::Status ScaleByteThresholdFlags(double scale) {
  if (!std::isfinite(scale) || scale < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--emulation_scale must be a finite number >= 1, got ", scale));
  }
  if (scale == 1) return absl::OkStatus();
  for (const ByteThresholdFlag& f : kByteThresholdFlags) {
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(f.name);
    if (flag == nullptr) continue;  // its strategy is not linked in
    int64_t value = 0;
    if (!absl::SimpleAtoi(flag->CurrentValue(), &value)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", f.name, "=", flag->CurrentValue(), " is not an integer"));
    }
    if (value <= 0) continue;  // 0: off, per tensor or automatic
    int64_t scaled = std::llround(static_cast<double>(value) / scale);
    // fusion's threshold counts bytes and must stay a multiple of 4.
    if (f.unit_bytes == 1) scaled -= scaled % 4;
    scaled = std::max<int64_t>(scaled, f.unit_bytes == 1 ? 4 : 1);
    std::string error;
    if (!flag->ParseFrom(absl::StrCat(scaled), &error)) {
      return absl::InternalError(
          absl::StrCat("--", f.name, " scaled to ", scaled, ": ", error));
    }
  }
  return absl::OkStatus();
}

}  // namespace ringside

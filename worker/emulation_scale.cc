#include "worker/emulation_scale.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/emulation_scale_check.h"

namespace ringside {

int64_t ScaledByteThreshold(int64_t value, double scale, int64_t unit_bytes) {
  if (value <= 0) return value;  // 0: off, per tensor or automatic
  int64_t scaled = std::llround(static_cast<double>(value) / scale);
  if (unit_bytes == 1) scaled -= scaled % 4;
  return std::max<int64_t>(scaled, unit_bytes == 1 ? 4 : 1);
}

absl::Status ScaleByteThresholdFlags(
    double scale, const std::function<bool(const std::string&)>& reads) {
  if (absl::Status s = CheckEmulationScale(scale); !s.ok()) return s;
  if (scale == 1) return absl::OkStatus();
  for (const ByteThresholdFlag& f : kByteThresholdFlags) {
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(f.name);
    if (flag == nullptr) continue;  // its strategy is not linked in
    if (reads && !reads(f.name)) continue;
    int64_t value = 0;
    if (!absl::SimpleAtoi(flag->CurrentValue(), &value)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", f.name, "=", flag->CurrentValue(), " is not an integer"));
    }
    if (value <= 0) continue;
    const int64_t scaled = ScaledByteThreshold(value, scale, f.unit_bytes);
    std::string error;
    if (!flag->ParseFrom(absl::StrCat(scaled), &error)) {
      return absl::InternalError(
          absl::StrCat("--", f.name, " scaled to ", scaled, ": ", error));
    }
  }
  return absl::OkStatus();
}

}  // namespace ringside

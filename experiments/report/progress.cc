#include "experiments/report/progress.h"

#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ringside {

std::string FormatClock(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  const int64_t s = std::llround(seconds);
  if (s < 3600) return absl::StrFormat("%02d:%02d", s / 60, s % 60);
  return absl::StrFormat("%d:%02d:%02d", s / 3600, (s / 60) % 60, s % 60);
}

std::optional<double> EtaSeconds(int total,
                                 const std::vector<double>& finished_s) {
  if (finished_s.empty()) return std::nullopt;
  double sum = 0;
  for (double d : finished_s) sum += d;
  const int left = total - static_cast<int>(finished_s.size());
  if (left <= 0) return 0.0;
  return sum / finished_s.size() * left;
}

std::string ProgressLine(int index, int total, absl::string_view what,
                         const std::vector<double>& finished_s) {
  const std::optional<double> eta = EtaSeconds(total, finished_s);
  return absl::StrCat("[", index, "/", total, "] ", what, ", ETA ",
                      eta ? FormatClock(*eta) : FormatClock(-1));
}

}  // namespace ringside

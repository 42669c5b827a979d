#include "worker/stragglers.h"

#include <cmath>
#include <random>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/stopwatch.h"

namespace ringside {

double Stragglers::Factor(int rank, int64_t step) const {
  double factor = 1.0;
  if (auto it = slow_ranks.find(rank); it != slow_ranks.end()) {
    factor = it->second;
  }
  if (compute_jitter > 0) {
    std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                      static_cast<uint32_t>(rank), static_cast<uint32_t>(step),
                      static_cast<uint32_t>(step >> 32)};
    std::mt19937_64 gen(seq);
    const double u = std::uniform_real_distribution<double>(-1.0, 1.0)(gen);
    factor *= 1.0 + compute_jitter * u;
  }
  return factor;
}

std::string Stragglers::Describe() const {
  std::vector<std::string> parts;
  for (const auto& [rank, factor] : slow_ranks) {
    parts.push_back(absl::StrFormat("rank %d x%g", rank, factor));
  }
  if (compute_jitter > 0) {
    parts.push_back(absl::StrFormat("jitter ±%g", compute_jitter));
  }
  return absl::StrJoin(parts, "; ");
}

void ComputeStretch::BeginPass(double factor, double now) {
  factor_ = factor;
  mark_ = now;
}

double ComputeStretch::Wait(double now) {
  if (factor_ <= 1.0) return 0;
  const double wait = (factor_ - 1.0) * (now - mark_);
  SleepUntil(now + wait);
  waited_s_ += wait;
  return wait;
}

GradientReadyFn ComputeStretch::Wrap(const GradientReadyFn& inner) {
  if (factor_ <= 1.0 || !inner) return inner;
  return [this, inner](int tensor) {
    Wait(NowSeconds());
    inner(tensor);
    mark_ = NowSeconds();  // the strategy's own time is not stretched
  };
}

double ComputeStretch::EndPass(double now) { return Wait(now); }

std::string SlowRanksWithin(const std::string& slow_ranks, int world_size) {
  std::vector<absl::string_view> kept;
  for (absl::string_view entry :
       absl::StrSplit(slow_ranks, ',', absl::SkipWhitespace())) {
    int rank = 0;
    const std::vector<absl::string_view> parts = absl::StrSplit(entry, ':');
    if (!absl::SimpleAtoi(parts[0], &rank) || rank < world_size) {
      kept.push_back(entry);
    }
  }
  return absl::StrJoin(kept, ",");
}

absl::StatusOr<Stragglers> ParseStragglers(const std::string& slow_ranks,
                                           double compute_jitter,
                                           int world_size, uint64_t seed) {
  Stragglers s;
  s.seed = seed;
  if (!(compute_jitter >= 0 && compute_jitter < 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--compute_jitter must be in [0, 1), got ", compute_jitter));
  }
  s.compute_jitter = compute_jitter;
  for (absl::string_view entry :
       absl::StrSplit(slow_ranks, ',', absl::SkipWhitespace())) {
    std::vector<absl::string_view> parts = absl::StrSplit(entry, ':');
    int rank = 0;
    double factor = 0;
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &rank) ||
        !absl::SimpleAtod(parts[1], &factor)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--slow_ranks: '", entry, "' is not RANK:FACTOR (e.g. 1:1.5)"));
    }
    if (rank < 0 || (world_size > 0 && rank >= world_size)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--slow_ranks: rank ", rank, " is outside [0, ", world_size, ")"));
    }
    if (!(factor > 0) || !std::isfinite(factor)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--slow_ranks: rank ", rank, "'s factor must be > 0, got ", factor));
    }
    if (!s.slow_ranks.emplace(rank, factor).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("--slow_ranks: rank ", rank, " is given twice"));
    }
  }
  return s;
}

}  // namespace ringside

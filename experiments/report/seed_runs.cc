#include "experiments/report/seed_runs.h"

#include <algorithm>
#include <map>

namespace ringside {

std::optional<ValueSpread> SpreadOf(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  return ValueSpread{values[(values.size() - 1) / 2], values.front(),
                     values.back()};
}

ReportRow WithSeedRuns(
    ReportRow first, const std::vector<std::pair<uint64_t, ReportRow>>& runs) {
  if (runs.size() < 2) return first;
  first.seed_runs.clear();
  std::vector<double> losses;
  for (const auto& [seed, row] : runs) {
    first.seed_runs.push_back({seed, row.eval_loss, row.curve, std::nullopt});
    if (row.eval_loss) losses.push_back(*row.eval_loss);
  }
  if (const std::optional<ValueSpread> s = SpreadOf(losses)) {
    first.eval_loss = s->median;
  }
  return first;
}

std::optional<ValueSpread> SeedLossSpread(const ReportRow& row) {
  std::vector<double> losses;
  for (const SeedRun& s : row.seed_runs) {
    if (s.eval_loss) losses.push_back(*s.eval_loss);
  }
  if (losses.size() < 2) return std::nullopt;
  return SpreadOf(losses);
}

std::pair<std::optional<ValueSpread>, int> SeedTimeSpread(
    const ReportRow& row) {
  std::vector<double> times;
  for (const SeedRun& s : row.seed_runs) {
    if (s.time_to_target_s) times.push_back(*s.time_to_target_s);
  }
  return {SpreadOf(times), static_cast<int>(times.size())};
}

void SetLossGaps(const std::function<bool(const ReportRow&)>& exact,
                 std::vector<ReportRow>* rows) {
  // Per worker count and seed: the exact rows' losses.
  std::map<std::pair<int, uint64_t>, std::vector<double>> reference;
  for (const ReportRow& r : *rows) {
    if (r.workers() < 2 || !exact(r)) continue;
    for (const SeedRun& s : r.seed_runs) {
      if (s.eval_loss) reference[{r.workers(), s.seed}].push_back(*s.eval_loss);
    }
  }
  for (ReportRow& r : *rows) {
    r.loss_gap.reset();
    if (r.seed_runs.size() < 2) continue;
    std::vector<double> gaps;
    for (const SeedRun& s : r.seed_runs) {
      const auto ref = reference.find({r.workers(), s.seed});
      if (!s.eval_loss || ref == reference.end()) continue;
      double mean = 0;
      for (double loss : ref->second) mean += loss;
      mean /= static_cast<double>(ref->second.size());
      gaps.push_back(*s.eval_loss - mean);
    }
    if (gaps.size() >= 2) r.loss_gap = SpreadOf(gaps);
  }
}

}  // namespace ringside

#include "experiments/report/repeats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace ringside {
namespace {

double SortKey(const ReportRow& row) {
  return row.step_s > 0 ? row.step_s : std::numeric_limits<double>::infinity();
}

}  // namespace

ReportRow MedianRun(const std::vector<ReportRow>& runs) {
  std::vector<size_t> order(runs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return SortKey(runs[a]) < SortKey(runs[b]);
  });
  ReportRow median = runs[order[(order.size() - 1) / 2]];
  median.run_step_s.clear();
  median.run_throughput.clear();
  median.run_total_utilization.clear();
  if (runs.size() > 1) {
    for (const ReportRow& run : runs) {
      median.run_step_s.push_back(run.step_s);
      median.run_throughput.push_back(run.throughput);
      median.run_total_utilization.push_back(TotalUtilization(run));
    }
  }
  return median;
}

double RunSpread(const std::vector<double>& run_step_s) {
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (double s : run_step_s) {
    if (s <= 0) continue;
    lo = std::min(lo, s);
    hi = std::max(hi, s);
  }
  return hi > 0 ? hi / lo : 1.0;
}

int64_t TimingWindowSteps(double step_s, double min_window_s,
                          int64_t min_steps) {
  int64_t steps = std::max<int64_t>(1, min_steps);
  if (step_s > 0 && min_window_s > 0) {
    const double needed = std::ceil(min_window_s / step_s);
    if (needed >= static_cast<double>(kMaxTimingSteps)) return kMaxTimingSteps;
    steps = std::max(steps, static_cast<int64_t>(needed));
  }
  return std::min(steps, kMaxTimingSteps);
}

ReportRow WithTrainingRun(ReportRow timing, const ReportRow& training) {
  timing.curve = training.curve;
  timing.eval_loss = training.eval_loss;
  timing.time_to_target_s = training.time_to_target_s;
  timing.seed_runs = training.seed_runs;
  timing.loss_gap = training.loss_gap;
  return timing;
}

}  // namespace ringside

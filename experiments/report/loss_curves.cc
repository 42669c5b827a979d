#include "experiments/report/loss_curves.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace ringside {
namespace {

using nlohmann::json;

bool HasNumbers(const json& record) {
  for (const char* key : {"step", "samples", "train_wall_s", "loss"}) {
    if (!record.contains(key) || !record[key].is_number()) return false;
  }
  return true;
}

// The lowest loss of a non-empty curve.
double LowestLoss(const std::vector<EvalPoint>& curve) {
  return std::min_element(curve.begin(), curve.end(),
                          [](const EvalPoint& a, const EvalPoint& b) {
                            return a.loss < b.loss;
                          })
      ->loss;
}

}  // namespace

bool IsEvalRecord(const json& record) {
  return record.is_object() && record.contains("event") &&
         record["event"] == "eval";
}

void SetEvalCurve(const std::vector<json>& records, ReportRow* row) {
  row->curve.clear();
  if (row->emulated) return;
  for (const json& r : records) {
    if (!IsEvalRecord(r) || !HasNumbers(r)) continue;
    row->curve.push_back({r["step"].get<int64_t>(), r["samples"].get<int64_t>(),
                          r["train_wall_s"].get<double>(),
                          r["loss"].get<double>()});
  }
  std::stable_sort(
      row->curve.begin(), row->curve.end(),
      [](const EvalPoint& a, const EvalPoint& b) { return a.step < b.step; });
}

std::optional<TargetLoss> ChooseTargetLoss(
    const std::vector<ReportRow>& rows, double given,
    const std::function<bool(const ReportRow&)>& exact) {
  std::optional<double> reached_by_all;
  auto reach = [&reached_by_all](const std::vector<EvalPoint>& curve) {
    if (curve.empty()) return;
    const double lowest = LowestLoss(curve);
    if (!reached_by_all || lowest > *reached_by_all) reached_by_all = lowest;
  };
  for (const ReportRow& r : rows) {
    if (exact && !exact(r)) continue;
    reach(r.curve);
    for (const SeedRun& s : r.seed_runs) reach(s.curve);
  }
  if (!reached_by_all) return std::nullopt;
  if (given > 0) return TargetLoss{given, true};
  return TargetLoss{*reached_by_all, false, exact != nullptr};
}

std::optional<double> TimeToTarget(const std::vector<EvalPoint>& curve,
                                   double target) {
  for (const EvalPoint& p : curve) {
    if (p.loss <= target) return p.train_wall_s;
  }
  return std::nullopt;
}

std::optional<double> TimeToTarget(const ReportRow& row, double target) {
  return TimeToTarget(row.curve, target);
}

void SetTimesToTarget(const std::optional<TargetLoss>& target,
                      std::vector<ReportRow>* rows) {
  for (ReportRow& r : *rows) {
    if (r.seed_runs.empty()) {
      r.time_to_target_s =
          target ? TimeToTarget(r, target->loss) : std::nullopt;
      continue;
    }
    // The median over the seeds, a seed that never got there slower than
    // any that did.
    std::vector<std::optional<double>> times;
    for (SeedRun& s : r.seed_runs) {
      s.time_to_target_s =
          target ? TimeToTarget(s.curve, target->loss) : std::nullopt;
      times.push_back(s.time_to_target_s);
    }
    std::sort(times.begin(), times.end(),
              [](const std::optional<double>& a,
                 const std::optional<double>& b) {
                return a.has_value() && (!b.has_value() || *a < *b);
              });
    r.time_to_target_s = times[(times.size() - 1) / 2];
  }
}

std::string TargetLossLine(const TargetLoss& target) {
  return absl::StrFormat(
      "Target loss %.4f (%s)", target.loss,
      target.given ? "--target_loss"
      : target.exact_only
          ? "reached by every exact run; lossy and stale runs do not set "
            "it; --target_loss sets it"
          : "reached by every run; --target_loss sets it");
}

json TargetLossJson(const std::optional<TargetLoss>& target) {
  if (!target) return json();
  return {{"loss", target->loss},
          {"source", target->given        ? "given"
                     : target->exact_only ? "reached by every exact run"
                                          : "reached by every run"}};
}

std::string LossCurvesCsv(const std::vector<ReportRow>& rows) {
  std::string out =
      "strategy,parallel_type,workers,step,samples,train_wall_s,loss\n";
  for (const ReportRow& r : rows) {
    for (const EvalPoint& p : r.curve) {
      absl::StrAppend(
          &out,
          absl::StrJoin(
              {CsvField(r.strategy), CsvField(ParallelTypeLabel(r)),
               absl::StrCat(r.workers()), absl::StrCat(p.step),
               absl::StrCat(p.samples), absl::StrFormat("%.4f", p.train_wall_s),
               absl::StrFormat("%.6g", p.loss)},
              ","),
          "\n");
    }
  }
  return out;
}

}  // namespace ringside

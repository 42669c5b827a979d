#include "experiments/report/prediction_report.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "experiments/report/repeats.h"

namespace ringside {
namespace {

using nlohmann::json;

std::string Ms(double seconds) {
  return absl::StrFormat("%.2f", seconds * 1e3);
}

std::string Percent(double fraction) {
  return absl::StrFormat("%.0f%%", 100 * fraction);
}

// "10.80–13.34 (3 runs)": the fastest and slowest of a repeated row's runs;
// "-" for a row run once.
std::string RunRange(const PredictedRun& r) {
  if (r.measured_runs_s.size() < 2) return "-";
  const auto [lo, hi] =
      std::minmax_element(r.measured_runs_s.begin(), r.measured_runs_s.end());
  return absl::StrCat(Ms(*lo), "–", Ms(*hi), " (", r.measured_runs_s.size(),
                      " runs)");
}

double MeanUtilization(const ReportRow& row) {
  return row.utilization.empty() ? 0 : TotalUtilization(row) / row.workers();
}

// The ranks per host of hierarchical and byteps: their final record's,
// else (an older record) from the variant "h×r" (hosts × ranks per host);
// 0 (all on one host) otherwise.
int64_t RanksPerHostOf(const ReportRow& row) {
  if (row.ranks_per_host > 0) return row.ranks_per_host;
  const std::vector<std::string> parts = absl::StrSplit(row.variant, "×");
  int64_t r = 0;
  if (parts.size() == 2 && absl::SimpleAtoi(parts[1], &r) && r > 0) return r;
  return 0;
}

// async_ps's staleness bound: its final record's, else (an older record)
// from its variant "τ=2"; 0 otherwise.
int64_t StalenessOf(const ReportRow& row) {
  if (row.staleness >= 0) return row.staleness;
  absl::string_view v = row.variant;
  int64_t tau = 0;
  if (absl::ConsumePrefix(&v, "τ=") && absl::SimpleAtoi(v, &tau) && tau > 0) {
    return tau;
  }
  return 0;
}


// A row's measured gradient-ready times as the cost model's schedule
// (empty: not reported); the ready times sorted, as the model requires
// (a mean per tensor keeps them in order but for ties).
std::vector<GradientReady> ReadySchedule(const ReportRow& row) {
  std::vector<GradientReady> out;
  for (const GradientReadyTime& g : row.gradient_ready) {
    out.push_back({g.bytes, g.ready_s});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const GradientReady& a, const GradientReady& b) {
                     return a.ready_s < b.ready_s;
                   });
  return out;
}

// The name of the single-worker run a row's compute is taken from.
// The row's measured window's mean step (PredictMeasuredWindow) where its
// record gives the window, else PredictStep's steady step.
absl::StatusOr<Prediction> PredictRowWindow(const std::string& as,
                                            const CostInputs& in,
                                            const ReportRow& row,
                                            PlainStepsInWindow* plain) {
  if (row.warmup_steps < 0 || row.measured_steps < 1) {
    return PredictStep(as, in);
  }
  return PredictMeasuredWindow(as, in,
                               std::max(row.warmup_steps, row.start_step),
                               row.measured_steps, plain);
}

std::string ReferenceName(const ReportRow& row) {
  return row.strategy == kDdpStrategy ? "PyTorch DDP" : "Baseline";
}

// Whether two rows emulated the same compute per step (both none counts).
bool SameEmulatedCompute(const ReportRow& a, const ReportRow& b) {
  return std::abs(a.emulated_compute_s - b.emulated_compute_s) <=
         1e-9 * std::max(a.emulated_compute_s, b.emulated_compute_s);
}

// The sweep's single-worker run of the same compute as `row`: the first
// "baseline" row that emulated what `row` emulated (a sweep may hold a
// baseline per emulated compute, compare's baseline@emulated_compute_ms)
// for ringside's rows, the first one-worker "ddp" row for PyTorch DDP's
// (its compute is PyTorch's); nullptr when there is none.
const ReportRow* ReferenceOf(const ReportRow& row,
                             const std::vector<ReportRow>& rows) {
  const bool ddp = row.strategy == kDdpStrategy;
  for (const ReportRow& r : rows) {
    if (r.workers() != 1) continue;
    if (ddp ? r.strategy == kDdpStrategy
            : r.strategy == "baseline" && SameEmulatedCompute(r, row)) {
      return &r;
    }
  }
  return nullptr;
}

// Whether the row is its reference, or a prediction that adds nothing to
// the reference's compute (n = 1, no communication, no CPU terms).
bool RestatesReference(const PredictedRun& r) {
  if (r.strategy == "baseline") return true;
  const std::optional<Prediction>& p = r.prediction ? r.prediction : r.explained;
  return r.workers == 1 && p.has_value() && p->comm_s == 0 &&
         p->step_s == p->compute_s;
}

// Why a row's error is left out of the summary ("" = counted).
std::string NotCounted(const ReportRow& row, const ReportRow* reference,
                       const PredictedRun& run, int cores) {
  if (&row == reference || row.strategy == "baseline") {
    return "the reference run: its compute is every row's t_c";
  }
  if (RestatesReference(run)) {
    return "n = 1 without communication: its prediction is the reference's "
           "compute alone";
  }
  const int busy = row.workers() * std::max(1, row.compute_threads) +
                   row.prm_srv;
  if (!row.emulated && cores > 0 && busy > cores) {
    return absl::StrFormat(
        "outside the model's domain: %d worker(s) × %d compute thread(s) + "
        "%d server(s) on %d cores share them, which the model does not "
        "price",
        row.workers(), std::max(1, row.compute_threads), row.prm_srv, cores);
  }
  // Workers that fill the cores with their compute while their
  // communication runs beside it (the prediction says whether it does,
  // from the reference's gradient-ready times): every transport thread
  // that wakes then takes a core, and its copies and sums the caches,
  // from a compute thread. The model prices each worker's compute as
  // alone on its device, so it does not price that slowdown.
  if (!row.emulated && cores > 0 && row.workers() > 1 && busy >= cores &&
      run.prediction && run.prediction->communicates_during_compute) {
    return absl::StrFormat(
        "outside the model's domain: its communication runs during the "
        "compute while %d worker(s) × %d compute thread(s) + %d server(s) "
        "hold the %d cores, so its transport's threads take cores and "
        "cache from the compute, which the model does not price",
        row.workers(), std::max(1, row.compute_threads), row.prm_srv, cores);
  }
  // The prediction's own estimate, from the reference's compute and the
  // calibration (nothing of this row's run): its processes keep most of
  // the cores busy, so they contend for them, which the model prices only
  // as a perfectly packed bound.
  if (run.prediction && run.prediction->core_share >= kCoreBoundShare) {
    return absl::StrFormat(
        "outside the model's domain: core-bound, its predicted CPU demand "
        "keeps %.0f%% of the %d cores busy (its compute, its collectives' "
        "or rounds' CPU and the link's copies), and processes contending "
        "for the cores run short of the perfectly packed bound the model "
        "prices",
        100 * run.prediction->core_share, cores);
  }
  return "";
}

}  // namespace

std::string RowUpdatesLabel(const ReportRow& row) {
  if (!row.updates.empty()) return row.updates;
  return UpdatesLabel(row.modelled_as.empty() ? row.strategy : row.modelled_as,
                      StalenessOf(row));
}

std::vector<PredictedRun> PredictRuns(const std::vector<ReportRow>& rows,
                                      const CostInputs& link, int cores) {
  const std::vector<std::string> known = CostModelStrategies();
  std::vector<PredictedRun> runs;
  for (const ReportRow& row : rows) {
    PredictedRun run;
    run.strategy = row.strategy;
    run.parallel_type = ParallelTypeLabel(row);
    run.workers = row.workers();
    run.prm_srv = row.prm_srv;
    run.own_compute_s = row.compute_step_s;
    run.measured_step_s = row.step_s;
    run.measured_runs_s = row.run_step_s;
    run.measured_utilization = MeanUtilization(row);
    run.updates = RowUpdatesLabel(row);
    const ReportRow* reference = ReferenceOf(row, rows);
    if (reference != nullptr) {
      run.compute_s = reference->compute_step_s;
      run.reference = absl::StrCat(ParallelTypeLabel(*reference), " n=1");
    }
    CostInputs in = link;
    in.compute_emulated = row.emulated;
    in.model_bytes = static_cast<double>(row.model_bytes);
    in.num_tensors = row.num_tensors;
    in.tensor_shapes = row.tensor_shapes;
    in.workers = row.workers();
    in.servers = std::max(1, row.prm_srv);
    in.servers_beside_rank0 = row.servers_beside_rank0;
    in.ranks_per_host = RanksPerHostOf(row);
    in.staleness = StalenessOf(row);
    in.ring_critical_bytes = row.ring_critical_bytes;
    // The run's own bucket caps (its --strategies entry may set them).
    if (row.ring_bucket_bytes >= 0) in.bucket_bytes = row.ring_bucket_bytes;
    if (row.ring_first_bucket_bytes >= 0) {
      in.first_bucket_bytes = row.ring_first_bucket_bytes;
    }
    if (row.ps_chunk_bytes >= 0) in.ps_chunk_bytes = row.ps_chunk_bytes;
    for (const auto& [flag, value] : row.strategy_options) {
      in.strategy_options[flag] = value;
    }
    // The registry says which formula applies and what goes on the wire.
    const std::string& as = row.modelled_as;
    in.model_bytes *= row.wire_bytes_per_model_byte;
    run.modelled_as = as;
    if (row.wire_bytes_per_model_byte != 1.0) {
      absl::StrAppend(&run.modelled_as, ", M×",
                      absl::StrFormat("%g", row.wire_bytes_per_model_byte));
    }
    if (row.servers_beside_rank0) {
      absl::StrAppend(&run.modelled_as, ", server beside rank 0");
    }
    if (std::find(known.begin(), known.end(), as) == known.end()) {
      run.why_not = "not in the cost model";
    } else if (row.step_s <= 0 || row.model_bytes <= 0 ||
               row.num_tensors <= 0) {
      run.why_not =
          "the run's records lack per-step timing or the model's size";
    } else {
      // Explained: from the row's own compute and gradient-ready times.
      if (row.compute_step_s > 0) {
        CostInputs own = in;
        own.compute_s = row.compute_step_s;
        own.compute_cpu_s = row.compute_cpu_step_s;
        own.gradient_ready = ReadySchedule(row);
        if (absl::StatusOr<Prediction> p = PredictRowWindow(as, own, row,
                                                            nullptr);
            p.ok()) {
          run.explained = *p;
          absl::StatusOr<double> e = PredictionError(p->step_s, row.step_s);
          if (e.ok()) run.explained_error = *e;
        }
      }
      if (reference == nullptr || reference->compute_step_s <= 0) {
        run.why_not = reference == nullptr
                          ? absl::StrCat("no single-worker reference run (",
                                         ReferenceName(row), " n=1",
                                         row.emulated_compute_s > 0
                                             ? absl::StrFormat(
                                                   " at %.1f ms of emulated "
                                                   "compute",
                                                   1e3 * row.emulated_compute_s)
                                             : std::string(),
                                         ") to take the compute from")
                          : "the reference run's records lack its compute";
      } else {
        in.compute_s = reference->compute_step_s;
        in.compute_cpu_s = reference->compute_cpu_step_s;
        // Overlap with backward from when the reference's gradients
        // became ready.
        in.gradient_ready = ReadySchedule(*reference);
        if (absl::StatusOr<Prediction> p =
                PredictRowWindow(as, in, row, &run.plain_steps);
            !p.ok()) {
          run.why_not = std::string(p.status().message());
        } else {
          run.prediction = *p;
          absl::StatusOr<double> e = PredictionError(p->step_s, row.step_s);
          if (e.ok()) run.error = *e;
        }
      }
    }
    if (!run.why_not.empty() && !run.explained) run.modelled_as = "";
    run.not_counted = NotCounted(row, reference, run, cores);
    if (in.staleness > 0 && row.warmup_steps >= 0 &&
        row.warmup_steps < in.staleness) {
      // Step t waits for round t − τ: the first τ steps wait for none.
      run.caveat = absl::StrFormat(
          "its first %d measured step(s) waited for no round (warm-up %d < "
          "τ = %d: the pipeline filling), so its measured step is short of "
          "the steady state the model predicts; --warmup_steps=%d or more "
          "measures that",
          in.staleness - row.warmup_steps, row.warmup_steps, in.staleness,
          in.staleness);
    }
    runs.push_back(std::move(run));
  }
  return runs;
}

ErrorSummary SummarizeErrors(const std::vector<PredictedRun>& runs,
                             bool explained) {
  ErrorSummary summary;
  for (const PredictedRun& r : runs) {
    const std::optional<double>& error =
        explained ? r.explained_error : r.error;
    if (!error) continue;
    if (explained ? RestatesReference(r) : !r.not_counted.empty()) continue;
    ++summary.modelled;
    if (std::abs(*error) <= 0.2) {
      ++summary.within;
    } else {
      summary.outside.push_back(absl::StrFormat(
          "%s n=%d %+.0f%%", r.parallel_type, r.workers, 100 * *error));
    }
  }
  return summary;
}

std::string PredictionMarkdown(const std::vector<PredictedRun>& runs,
                               const CostInputs& link,
                               const std::string& link_source) {
  // Two decimals, or three significant digits below 1 Gbit/s (a shaped
  // 0.1 Gbit/s link measures 0.0934).
  const double gbit = link.bandwidth_Bps * 8 / 1e9;
  const std::string b = gbit >= 1 ? absl::StrFormat("%.2f", gbit)
                                  : absl::StrFormat("%.3g", gbit);
  std::string out = absl::StrFormat(
      "Link: B = %s Gbit/s, α = %.1f µs (%s); fusion F = %.0f MiB, τ = "
      "%.1f ms; overlap with backward from when the reference run's "
      "gradients became ready, per tensor (o = %.2f where it reported "
      "none); %s. t_c is the compute per step of the "
      "single-worker reference run (the baseline; PyTorch DDP at n = 1 for "
      "DDP's rows), what a user has before the run; error = (predicted − "
      "measured) / measured step time. Explained: the same formula from the "
      "row's own measured compute (its slowest rank's), which already holds "
      "whatever the run's communication cost the compute. Step − own "
      "compute: what synchronizing cost a step beyond the row's own compute, "
      "so that a slower compute (PyTorch's eager, for the DDP rows) does "
      "not read as synchronization overhead.\n\n",
      b, link.latency_s * 1e6, link_source,
      link.fusion_threshold_bytes / (1 << 20), link.cycle_s * 1e3,
      link.overlap,
      link.cpu_streams_with_link
          ? "the CPU terms' per-byte part and the collectives' ring steps "
            "run while the bytes are on the wire (a link of its own)"
          : "the CPU terms add to the link's seconds (loopback: the cores "
            "move its bytes)");
  // With repeated runs, the median run's step and every run's range.
  const bool repeated =
      std::any_of(runs.begin(), runs.end(), [](const PredictedRun& r) {
        return r.measured_runs_s.size() > 1;
      });
  std::vector<std::vector<std::string>> cells = {
      {"Parallel type", "n", "PrmSrv", "Modelled as", "Compute, reference (ms)",
       "Predicted step (ms)",
       repeated ? "Measured step, median run (ms)" : "Measured step (ms)",
       "Error", "Own compute (ms)", "Explained step (ms)", "Explained error",
       "Predicted util.", "Measured util.", "Step − own compute (ms)"}};
  if (repeated) {
    cells[0].insert(cells[0].begin() + 7, "Runs: fastest–slowest (ms)");
  }
  const auto signed_percent = [](const std::optional<double>& e) {
    return e ? absl::StrFormat("%+.0f%%", 100 * *e) : std::string("-");
  };
  std::vector<std::string> reasons;
  for (const PredictedRun& r : runs) {
    const bool p = r.prediction.has_value();
    std::string error = signed_percent(r.error);
    if (r.error && !r.not_counted.empty()) error += " *";
    cells.push_back(
        {r.parallel_type, absl::StrCat(r.workers), absl::StrCat(r.prm_srv),
         r.modelled_as.empty() ? "-" : r.modelled_as,
         r.reference.empty() ? "-" : Ms(r.compute_s),
         p ? Ms(r.prediction->step_s) : "-", Ms(r.measured_step_s), error,
         Ms(r.own_compute_s), r.explained ? Ms(r.explained->step_s) : "-",
         signed_percent(r.explained_error),
         p ? Percent(r.prediction->utilization) : "-",
         Percent(r.measured_utilization),
         Ms(r.measured_step_s - r.own_compute_s)});
    if (repeated) {
      cells.back().insert(cells.back().begin() + 7, RunRange(r));
    }
    if (!p) {
      reasons.push_back(absl::StrCat("- ", r.parallel_type, " n=", r.workers,
                                     ": no prediction (", r.why_not, ")"));
    }
    if (!r.not_counted.empty() && r.strategy != "baseline") {
      reasons.push_back(absl::StrCat("- ", r.parallel_type, " n=", r.workers,
                                     ": not counted (", r.not_counted, ")"));
    }
    if (!r.caveat.empty()) {
      reasons.push_back(absl::StrCat("- ", r.parallel_type, " n=", r.workers,
                                     ": ", r.caveat, "."));
    }
    if (p && r.plain_steps.steps > 0) {
      const PlainStepsInWindow& w = r.plain_steps;
      reasons.push_back(absl::StrFormat(
          "- %s n=%d: %d of its measured steps were plain ones (--%s), "
          "priced by %s's formula at %s ms a step against its own steps' "
          "%s ms; its predicted step is the window's mean.",
          r.parallel_type, r.workers, w.steps, w.option, w.formula,
          Ms(w.plain_step_s), Ms(w.own_step_s)));
    }
    if (p && r.prediction->step_compute_s < r.compute_s) {
      reasons.push_back(absl::StrFormat(
          "- %s n=%d: its predicted step counts the compute's CPU time, "
          "%s ms of the %s ms it took (its background rounds ran on the "
          "compute's cores; their CPU work is in the CPU terms).",
          r.parallel_type, r.workers, Ms(r.prediction->step_compute_s),
          Ms(r.compute_s)));
    }
    if (p && r.prediction->core_bound_s > 0 &&
        r.prediction->core_bound_s >= r.prediction->step_s) {
      reasons.push_back(absl::StrFormat(
          "- %s n=%d: its predicted step is the cores' bound, the CPU work "
          "of its processes (compute, collectives or rounds, the link's "
          "bytes) over the machine's cores: here the cores, not the link, "
          "decide the step.",
          r.parallel_type, r.workers));
    }
  }
  out += MarkdownGrid(cells);
  for (const bool explained : {false, true}) {
    const ErrorSummary summary = SummarizeErrors(runs, explained);
    if (summary.modelled == 0) continue;
    absl::StrAppend(
        &out, explained ? "Explained (each row's own compute)" : "\nPredicted",
        " within 20% of the measured step: ", summary.within, " of ",
        summary.modelled,
        explained ? " rows (the baseline and the rows that restate it aside)"
                  : " counted rows (* and the list below: rows not counted)");
    if (!summary.outside.empty()) {
      absl::StrAppend(&out, "; outside: ",
                      absl::StrJoin(summary.outside, ", "));
    }
    out += ".\n";
  }
  if (repeated) {
    // The widest spread says how far one run alone could have been off.
    const PredictedRun* widest = nullptr;
    double widest_spread = 1;
    for (const PredictedRun& r : runs) {
      if (const double spread = RunSpread(r.measured_runs_s);
          spread > widest_spread) {
        widest_spread = spread;
        widest = &r;
      }
    }
    absl::StrAppend(
        &out,
        "\nEach row's measured step (and its compute, utilization and error) "
        "is its median run's; the runs went round by round through every "
        "row, so a slow spell of the machine fell on several rows, not one.");
    if (widest != nullptr) {
      absl::StrAppend(
          &out,
          absl::StrFormat(" The widest run-to-run spread: %s n=%d, its "
                          "slowest run %.2f× its fastest.",
                          widest->parallel_type, widest->workers,
                          widest_spread));
    }
    out += "\n";
  }
  if (!reasons.empty()) {
    out += "\n";
    for (const std::string& line : reasons) out += line + "\n";
  }
  return out;
}

json PredictionJson(const std::vector<PredictedRun>& runs,
                    const CostInputs& link, const std::string& link_source) {
  json out = {{"link",
               {{"bandwidth_Bps", link.bandwidth_Bps},
                {"latency_s", link.latency_s},
                {"link_cpu_byte_s", link.link_cpu_byte_s},
                {"fusion_threshold_bytes", link.fusion_threshold_bytes},
                {"cycle_s", link.cycle_s},
                {"overlap", link.overlap},
                {"source", link_source}}},
              {"runs", json::array()}};
  for (const PredictedRun& r : runs) {
    const bool p = r.prediction.has_value();
    out["runs"].push_back(
        {{"strategy", r.strategy},
         {"workers", r.workers},
         {"prm_srv", r.prm_srv},
         {"modelled_as",
          r.modelled_as.empty() ? json() : json(r.modelled_as)},
         {"compute_s", r.reference.empty() ? json() : json(r.compute_s)},
         {"compute_reference",
          r.reference.empty() ? json() : json(r.reference)},
         {"own_compute_s", r.own_compute_s},
         {"measured_step_s", r.measured_step_s},
         {"measured_step_runs_s", r.measured_runs_s.size() > 1
                                      ? json(r.measured_runs_s)
                                      : json()},
         {"measured_utilization", r.measured_utilization},
         {"predicted_step_s", p ? json(r.prediction->step_s) : json()},
         {"predicted_utilization",
          p ? json(r.prediction->utilization) : json()},
         {"comm_s", p ? json(r.prediction->comm_s) : json()},
         {"core_bound_s", p && r.prediction->core_bound_s > 0
                              ? json(r.prediction->core_bound_s)
                              : json()},
         {"backward_hidden_s",
          p ? json(r.prediction->backward_hidden_s) : json()},
         {"cpu_demand_s", p && r.prediction->cpu_demand_s > 0
                              ? json(r.prediction->cpu_demand_s)
                              : json()},
         {"core_share", p && r.prediction->core_share > 0
                            ? json(r.prediction->core_share)
                            : json()},
         {"cores_decide", p && r.prediction->core_bound_s > 0 &&
                              r.prediction->core_bound_s >=
                                  r.prediction->step_s},
         {"updates", r.updates},
         {"error", r.error ? json(*r.error) : json()},
         {"explained_step_s",
          r.explained ? json(r.explained->step_s) : json()},
         {"overhead_s", r.measured_step_s - r.own_compute_s},
         {"explained_error",
          r.explained_error ? json(*r.explained_error) : json()},
         {"counted", r.error.has_value() && r.not_counted.empty()},
         {"not_counted", r.not_counted.empty() ? json() : json(r.not_counted)},
         {"why_not", p ? json() : json(r.why_not)},
         {"caveat", r.caveat.empty() ? json() : json(r.caveat)},
         {"plain_steps_in_window",
          r.plain_steps.steps > 0
              ? json{{"steps", r.plain_steps.steps},
                     {"option", r.plain_steps.option},
                     {"formula", r.plain_steps.formula},
                     {"plain_step_s", r.plain_steps.plain_step_s},
                     {"own_step_s", r.plain_steps.own_step_s}}
              : json()}});
  }
  return out;
}

}  // namespace ringside

#include "experiments/report/sweep_report.h"

#include <algorithm>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "experiments/cost/cost_model.h"
#include "experiments/report/prediction_report.h"
#include "experiments/report/seed_runs.h"

namespace ringside {

const ReportRow* FirstRowOf(const std::vector<ReportRow>& rows,
                            const std::string& strategy) {
  for (const ReportRow& r : rows) {
    if (r.strategy == strategy) return &r;
  }
  return nullptr;
}

namespace {

using nlohmann::json;

const ReportRow* FindRow(const std::vector<ReportRow>& rows,
                         const std::string& strategy, int n) {
  for (const ReportRow& r : rows) {
    if (r.strategy == strategy && r.workers() == n) return &r;
  }
  return nullptr;
}

std::optional<double> Metric(const ReportRow& row, std::optional<double> base,
                             ScalingMetric metric) {
  switch (metric) {
    case ScalingMetric::kThroughput:
      return row.throughput;
    case ScalingMetric::kSpeedup:
      return Speedup(row, base);
    case ScalingMetric::kEfficiency:
      return ScalingEfficiency(row, base);
  }
  return std::nullopt;
}

std::string Cell(std::optional<double> v, ScalingMetric metric) {
  if (!v) return "-";
  return absl::StrFormat("%.*f", metric == ScalingMetric::kThroughput ? 1 : 2,
                         *v);
}

// The scaling tables' columns: n = 1 when there is a baseline, and the
// sweep.
std::vector<int> ScalingColumns(const std::vector<ReportRow>& rows,
                                const std::vector<int>& workers) {
  std::set<int> ns(workers.begin(), workers.end());
  if (FirstRowOf(rows, "baseline") != nullptr) ns.insert(1);
  return {ns.begin(), ns.end()};
}

json OrNull(std::optional<double> v) { return v ? json(*v) : json(); }

}  // namespace

std::string ComputeLabel(const std::vector<ReportRow>& rows) {
  if (rows.empty()) return "unknown";
  size_t emulated = 0;
  for (const ReportRow& r : rows) emulated += r.emulated ? 1 : 0;
  if (emulated == 0) return "real";
  return emulated == rows.size() ? "emulated" : "mixed";
}

std::string ComputeSentence(const std::vector<ReportRow>& rows) {
  const std::string label = ComputeLabel(rows);
  if (label == "real") {
    return "real: the workers ran the model's forward and backward passes.";
  }
  if (label == "emulated") {
    return "emulated: a synthetic model with a real network's gradient "
           "tensors sleeps the compute time a real model would take; "
           "communication and synchronization are real.";
  }
  if (label == "mixed") {
    std::vector<std::string> emulated;
    for (const ReportRow& r : rows) {
      if (r.emulated) {
        emulated.push_back(absl::StrCat(r.strategy, " n=", r.workers()));
      }
    }
    return absl::StrCat("mixed: emulated in ", absl::StrJoin(emulated, ", "),
                        "; real in the other runs.");
  }
  return "unknown: no run finished.";
}

// "float32 in every row", or the rows that computed otherwise.
std::string PrecisionSentence(const std::vector<ReportRow>& rows) {
  std::vector<std::string> bf16;
  for (const ReportRow& r : rows) {
    if (r.precision != "fp32") {
      bf16.push_back(absl::StrCat(ParallelTypeLabel(r), " n=", r.workers()));
    }
  }
  if (bf16.empty()) return "float32 in every row.";
  return absl::StrCat(
      "bf16 (bfloat16 matrix-product operands, float32 accumulation, "
      "weights, gradients and optimizer state) in ",
      absl::StrJoin(bf16, ", "), "; float32 in the others.");
}

std::vector<int> SweepWorkers(const std::vector<ReportRow>& rows) {
  std::set<int> ns;
  for (const ReportRow& r : rows) {
    if (r.strategy != "baseline") ns.insert(r.workers());
  }
  return {ns.begin(), ns.end()};
}

std::vector<std::string> SweepStrategies(const std::vector<ReportRow>& rows) {
  std::vector<std::string> names;
  for (const ReportRow& r : rows) {
    if (r.strategy == "baseline") continue;
    if (std::find(names.begin(), names.end(), r.strategy) == names.end()) {
      names.push_back(r.strategy);
    }
  }
  return names;
}

std::vector<ReportRow> UtilizationRows(const std::vector<ReportRow>& rows,
                                       int n) {
  std::vector<ReportRow> out;
  if (const ReportRow* base = FirstRowOf(rows, "baseline")) {
    out.push_back(*base);
  }
  for (const ReportRow& r : rows) {
    if (r.strategy != "baseline" && r.workers() == n) out.push_back(r);
  }
  return out;
}

std::string ScalingMarkdown(const std::vector<ReportRow>& rows,
                            const std::vector<int>& workers,
                            ScalingMetric metric) {
  const std::vector<int> columns = ScalingColumns(rows, workers);
  const std::optional<double> base = BaselineThroughput(rows);
  std::vector<std::vector<std::string>> cells;
  cells.push_back({"Parallel type", "PrmSrv"});
  for (int n : columns) cells[0].push_back(absl::StrCat("n=", n));
  std::vector<std::string> names = {"baseline"};
  const std::vector<std::string> strategies = SweepStrategies(rows);
  names.insert(names.end(), strategies.begin(), strategies.end());
  for (const std::string& name : names) {
    const ReportRow* first = FirstRowOf(rows, name);
    if (first == nullptr) continue;
    std::vector<std::string> line = {ParallelTypeLabel(*first),
                                     absl::StrCat(first->prm_srv)};
    for (int n : columns) {
      const ReportRow* r = FindRow(rows, name, n);
      line.push_back(Cell(r ? Metric(*r, base, metric) : std::nullopt, metric));
    }
    cells.push_back(std::move(line));
  }
  if (metric == ScalingMetric::kSpeedup) {
    std::vector<std::string> line = {"Linear (ideal)", "-"};
    for (int n : columns) line.push_back(Cell(n, metric));
    cells.push_back(std::move(line));
  }
  return MarkdownGrid(cells);
}

std::optional<MemoryPerRank> FormulaMemory(const ReportRow& r) {
  if (r.model_bytes <= 0 || r.optimizer_state_per_param < 0 ||
      r.modelled_as.empty()) {
    return std::nullopt;
  }
  absl::StatusOr<MemoryPerRank> m = PredictMemory(
      r.modelled_as, static_cast<double>(r.model_bytes),
      r.optimizer_state_per_param, r.workers(), std::max(1, r.prm_srv));
  if (!m.ok()) return std::nullopt;
  return *m;
}

std::string SweepCsv(const std::vector<ReportRow>& rows,
                     const std::string& hardware) {
  size_t max_workers = 0;
  for (const ReportRow& r : rows) {
    max_workers = std::max(max_workers, r.utilization.size());
  }
  const std::optional<double> base = BaselineThroughput(rows);
  std::vector<std::string> header = {"strategy", "parallel_type", "workers",
                                     "prm_srv"};
  for (size_t w = 0; w < max_workers; ++w) {
    header.push_back(absl::StrCat("W", w));
  }
  for (const char* c :
       {"total", "throughput", "speedup", "scaling_eff", "eval_loss",
        "emulated", "device", "hardware", "worker_held_mb",
        "worker_optimizer_mb", "worker_peak_rss_mb", "server_state_mb",
        "server_peak_rss_mb", "formula_worker_mb", "formula_server_mb",
        "time_to_target_s", "runs", "throughput_min", "throughput_max",
        "throughput_spread"}) {
    header.push_back(c);
  }
  std::string out = absl::StrJoin(header, ",") + "\n";
  for (const ReportRow& r : rows) {
    std::vector<std::string> f = {
        CsvField(r.strategy), CsvField(ParallelTypeLabel(r)),
        absl::StrCat(r.workers()), absl::StrCat(r.prm_srv)};
    for (size_t w = 0; w < max_workers; ++w) {
      f.push_back(w < r.utilization.size()
                      ? absl::StrFormat("%.4f", r.utilization[w])
                      : "");
    }
    const std::optional<double> s = Speedup(r, base);
    const std::optional<double> e = ScalingEfficiency(r, base);
    f.push_back(absl::StrFormat("%.4f", TotalUtilization(r)));
    f.push_back(absl::StrFormat("%.3f", r.throughput));
    f.push_back(s ? absl::StrFormat("%.4f", *s) : "");
    f.push_back(e ? absl::StrFormat("%.4f", *e) : "");
    f.push_back(r.eval_loss ? absl::StrFormat("%.6g", *r.eval_loss) : "");
    f.push_back(r.emulated ? "true" : "false");
    f.push_back(CsvField(r.device));
    f.push_back(CsvField(hardware));
    for (int64_t bytes : {r.worker_held_bytes, r.worker_optimizer_bytes,
                          r.worker_peak_rss_bytes, r.server_state_bytes,
                          r.server_peak_rss_bytes}) {
      f.push_back(bytes > 0 ? absl::StrFormat("%.3f", bytes / 1e6) : "");
    }
    const std::optional<MemoryPerRank> formula = FormulaMemory(r);
    for (double bytes : {formula ? formula->worker_bytes : 0.0,
                         formula ? formula->server_bytes : 0.0}) {
      f.push_back(bytes > 0 ? absl::StrFormat("%.3f", bytes / 1e6) : "");
    }
    f.push_back(TimeToTargetCsv(r));
    f.push_back(absl::StrCat(std::max<size_t>(1, r.run_throughput.size())));
    const std::optional<std::pair<double, double>> range =
        ThroughputRunRange(r);
    const std::optional<double> spread = ThroughputSpread(r);
    if (range && spread) {
      f.push_back(absl::StrFormat("%.3f", range->first));
      f.push_back(absl::StrFormat("%.3f", range->second));
      f.push_back(absl::StrFormat("%.4f", *spread));
    } else {
      f.insert(f.end(), 3, "");
    }
    out += absl::StrJoin(f, ",") + "\n";
  }
  return out;
}

json SweepJson(const std::vector<ReportRow>& rows,
               const std::vector<int>& workers) {
  const std::optional<double> base = BaselineThroughput(rows);
  json out = {{"workers", workers}, {"compute", ComputeLabel(rows)}};
  out["utilization"] = json::array();
  for (int n : workers) {
    out["utilization"].push_back(
        {{"workers", n}, {"table", JsonReport(UtilizationRows(rows, n))}});
  }
  out["scaling"] = json::array();
  std::vector<std::string> names = {"baseline"};
  const std::vector<std::string> strategies = SweepStrategies(rows);
  names.insert(names.end(), strategies.begin(), strategies.end());
  for (const std::string& name : names) {
    const ReportRow* first = FirstRowOf(rows, name);
    if (first == nullptr) continue;
    json points = json::array();
    for (int n : ScalingColumns(rows, workers)) {
      const ReportRow* r = FindRow(rows, name, n);
      if (r == nullptr) continue;
      points.push_back({{"workers", n},
                        {"throughput", r->throughput},
                        {"speedup", OrNull(Speedup(*r, base))},
                        {"scaling_eff", OrNull(ScalingEfficiency(*r, base))}});
    }
    out["scaling"].push_back({{"strategy", name},
                              {"parallel_type", ParallelTypeLabel(*first)},
                              {"prm_srv", first->prm_srv},
                              {"emulated", first->emulated},
                              {"points", std::move(points)}});
  }
  out["rows"] = JsonReport(rows)["rows"];
  // Memory per rank, one entry per row that reports it (bytes; null where
  // not reported), as MemoryMarkdown shows it.
  out["memory"] = json::array();
  for (const ReportRow& r : rows) {
    if (r.worker_held_bytes <= 0) continue;
    auto bytes = [](int64_t b) { return b > 0 ? json(b) : json(); };
    const std::optional<MemoryPerRank> formula = FormulaMemory(r);
    auto predicted = [&formula](double MemoryPerRank::*field) {
      return formula && (*formula).*field > 0 ? json((*formula).*field)
                                                : json();
    };
    out["memory"].push_back(
        {{"strategy", r.strategy},
         {"parallel_type", ParallelTypeLabel(r)},
         {"workers", r.workers()},
         {"prm_srv", r.prm_srv},
         {"worker_held_bytes", bytes(r.worker_held_bytes)},
         {"worker_optimizer_bytes", bytes(r.worker_optimizer_bytes)},
         {"worker_peak_rss_bytes", bytes(r.worker_peak_rss_bytes)},
         {"server_state_bytes", bytes(r.server_state_bytes)},
         {"server_peak_rss_bytes", bytes(r.server_peak_rss_bytes)},
         {"formula", formula ? json(MemoryFormula(r.modelled_as)) : json()},
         {"formula_worker_bytes", predicted(&MemoryPerRank::worker_bytes)},
         {"formula_server_bytes", predicted(&MemoryPerRank::server_bytes)}});
  }
  return out;
}

std::string MemoryMarkdown(const std::vector<ReportRow>& rows) {
  bool any = false;
  for (const ReportRow& r : rows) any = any || r.worker_held_bytes > 0;
  if (!any) return "";
  auto mb = [](int64_t bytes) {
    return bytes > 0 ? absl::StrFormat("%.1f", bytes / 1e6) : std::string("-");
  };
  auto formula_mb = [](double bytes) {
    return bytes > 0 ? absl::StrFormat("%.1f", bytes / 1e6) : std::string("-");
  };
  std::vector<std::vector<std::string>> cells = {
      {"Parallel type", "n", "PrmSrv", "Mem/worker", "formula",
       "of it optimizer", "Peak RSS/worker", "Mem/server", "formula",
       "Peak RSS/server", "Formula"}};
  for (const ReportRow& r : rows) {
    const std::optional<MemoryPerRank> f = FormulaMemory(r);
    cells.push_back({ParallelTypeLabel(r), absl::StrCat(r.workers()),
                     absl::StrCat(r.prm_srv), mb(r.worker_held_bytes),
                     formula_mb(f ? f->worker_bytes : 0),
                     mb(r.worker_optimizer_bytes), mb(r.worker_peak_rss_bytes),
                     mb(r.server_state_bytes),
                     formula_mb(f ? f->server_bytes : 0),
                     mb(r.server_peak_rss_bytes),
                     f ? MemoryFormula(r.modelled_as) : "-"});
  }
  return absl::StrCat(
      MarkdownGrid(cells),
      "\nMem/worker: parameters + gradients (one flat buffer each) + the "
      "optimizer state the worker keeps; Mem/server: what a parameter "
      "server holds (its parameters, optimizer state and accumulators); the "
      "largest over ranks and servers, measured. Beside each, the cost "
      "model's formula (experiments/cost/cost_model.h; ZeRO's accounting: "
      "P the parameters' bytes, s the optimizer's state per parameter, "
      "plain SGD 0, momentum 1, Adam 2) for the row's n and K; \"-\" where "
      "the strategy has no formula or the run did not report s. "
      "zero2's and zero3's Mem/worker is the most they held at once: "
      "their shards plus the gradients written and not yet "
      "reduce-scattered (the whole gradient buffer when backward outruns "
      "the reductions) and, for zero3, the tensors gathered for use, which "
      "ZeRO's formulas leave out. On CUDA workers zero3's buffers are "
      "mapped page by page and the pages outside its shard given back (its "
      "final record's memory_saving: realised, with the bytes mapped at "
      "once as device_param_bytes and device_grad_bytes); where a device "
      "cannot, they stay whole-size and its Mem/worker is counted, not "
      "realised (memory_saving: counted_not_realised).\n");
}

std::string TrafficMarkdown(const std::vector<ReportRow>& rows) {
  std::vector<std::vector<std::string>> cells = {
      {"Parallel type", "n", "PrmSrv", "Sent per step (MB)",
       "vs an all-reduce of the model", "Updates"}};
  for (const ReportRow& r : rows) {
    if (r.workers() < 2 || r.bytes_sent_per_step < 0) continue;
    const std::optional<double> share = AllReduceShare(r);
    cells.push_back(
        {ParallelTypeLabel(r), absl::StrCat(r.workers()),
         absl::StrCat(r.prm_srv),
         absl::StrFormat("%.3f", r.bytes_sent_per_step / 1e6),
         share ? absl::StrFormat("%.3f (1/%.1f)", *share,
                                 *share > 0 ? 1 / *share : 0.0)
               : std::string("-"),
         RowUpdatesLabel(r)});
  }
  if (cells.size() == 1) return "";
  return absl::StrCat(
      MarkdownGrid(cells),
      "\nSent per step: the payload bytes rank 0 sent per measured step "
      "(its final record's bytes_sent over its measured steps); beside it "
      "the share of a ring all-reduce of the model, 2(n−1)/n·M, what the "
      "exact all-reduce strategies send (a parameter server's worker "
      "sends M). Updates: \"exact\" or how the row's updates differ; "
      "fewer bytes that buy less loss per step show in the Time to target "
      "column, not here.\n");
}

std::string SeedMarkdown(const std::vector<ReportRow>& rows) {
  auto range = [](const std::optional<ValueSpread>& s, const char* format) {
    if (!s) return std::string("-");
    return absl::StrCat(absl::StrFormat(format, s->median), " (",
                        absl::StrFormat(format, s->low), " to ",
                        absl::StrFormat(format, s->high), ")");
  };
  std::vector<std::vector<std::string>> cells = {
      {"Parallel type", "n", "Updates", "Seeds", "Val loss: median (range)",
       "Gap to exact: median (range)", "Time to target (s): median (range)",
       "Reached"}};
  for (const ReportRow& r : rows) {
    if (r.seed_runs.size() < 2) continue;
    const auto [times, reached] = SeedTimeSpread(r);
    cells.push_back({ParallelTypeLabel(r), absl::StrCat(r.workers()),
                     RowUpdatesLabel(r), absl::StrCat(r.seed_runs.size()),
                     range(SeedLossSpread(r), "%.4f"),
                     range(r.loss_gap, "%+.4f"), range(times, "%.2f"),
                     absl::StrCat(reached, " of ", r.seed_runs.size())});
  }
  if (cells.size() == 1) return "";
  return absl::StrCat(
      MarkdownGrid(cells),
      "\nEach row trained once per seed (--seeds: the workers' --seed and "
      "--data_seed, their initial parameters and data order; the timing "
      "runs use the first). Gap to exact: per seed, the row's final "
      "validation loss less the mean of the exact rows' at the same n and "
      "seed (> 0: worse), over the seeds. Time to target: over the seeds "
      "that reached the target; the main table's is the median over all "
      "seeds, one that never got there counting as slowest.\n");
}

std::string SweepMarkdown(const std::vector<ReportRow>& rows,
                          const std::vector<int>& workers,
                          const SweepDocument& doc) {
  std::string out = absl::StrCat("# ", doc.title, "\n\n");
  if (!doc.hardware.empty()) {
    absl::StrAppend(&out, "- **Hardware:** ", doc.hardware, "\n");
  }
  absl::StrAppend(&out, "- **Compute:** ", ComputeSentence(rows), "\n");
  absl::StrAppend(&out, "- **Precision:** ", PrecisionSentence(rows), "\n");
  if (!doc.run.empty()) absl::StrAppend(&out, "- **Run:** ", doc.run, "\n");
  if (!doc.command.empty()) {
    absl::StrAppend(&out, "- **Command:** `", doc.command, "`\n");
  }
  if (!doc.manifest.empty()) {
    absl::StrAppend(&out, "- **Manifest:** ", doc.manifest, "\n");
  }
  if (!doc.target_loss.empty()) {
    absl::StrAppend(&out, "\n", doc.target_loss,
                    ". Time to target: training wall time (evaluations "
                    "excluded) until rank 0's first validation loss at or "
                    "below it; \"-\" where a run never got there or has no "
                    "loss curve.\n");
  }
  for (int n : workers) {
    absl::StrAppend(&out, "\n## Utilization, n = ", n,
                    n == 1 ? " worker" : " workers", "\n\n",
                    MarkdownTable(UtilizationRows(rows, n)));
  }
  struct Section {
    const char* heading;
    ScalingMetric metric;
  };
  for (const Section& s :
       {Section{"Throughput (global samples/s)", ScalingMetric::kThroughput},
        Section{"Speedup (throughput / baseline throughput)",
                ScalingMetric::kSpeedup},
        Section{"Scaling efficiency (speedup / n)",
                ScalingMetric::kEfficiency}}) {
    absl::StrAppend(&out, "\n## ", s.heading, "\n\n",
                    ScalingMarkdown(rows, workers, s.metric));
  }
  if (const std::string memory = MemoryMarkdown(rows); !memory.empty()) {
    absl::StrAppend(&out, "\n## Memory per rank (MB)\n\n", memory);
  }
  if (const std::string traffic = TrafficMarkdown(rows); !traffic.empty()) {
    absl::StrAppend(&out, "\n## Traffic per worker\n\n", traffic);
  }
  if (const std::string seeds = SeedMarkdown(rows); !seeds.empty()) {
    absl::StrAppend(&out, "\n## Final loss over seeds\n\n", seeds);
  }
  if (!doc.cost_model.empty()) {
    absl::StrAppend(&out, "\n## Cost model vs measured\n\n", doc.cost_model);
  }
  if (!doc.images.empty()) {
    absl::StrAppend(&out, "\n## Plots\n");
    for (const ReportImage& image : doc.images) {
      absl::StrAppend(&out, "\n![", image.caption, "](", image.path, ")\n\n*",
                      image.caption, "*\n");
    }
  }
  if (!doc.notes.empty()) {
    absl::StrAppend(&out, "\n## Notes\n\n", absl::StrJoin(doc.notes, "\n\n"),
                    "\n");
  }
  return out;
}

}  // namespace ringside

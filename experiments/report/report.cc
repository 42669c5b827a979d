#include "experiments/report/report.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace ringside {
namespace {

using nlohmann::json;

size_t MaxWorkers(const std::vector<ReportRow>& rows) {
  size_t n = 0;
  for (const ReportRow& r : rows) n = std::max(n, r.utilization.size());
  return n;
}

std::string Fixed(std::optional<double> v, int decimals) {
  return v ? absl::StrFormat("%.*f", decimals, *v) : "-";
}

bool AnyEvalLoss(const std::vector<ReportRow>& rows) {
  for (const ReportRow& r : rows) {
    if (r.eval_loss.has_value()) return true;
  }
  return false;
}

bool AnyRepeated(const std::vector<ReportRow>& rows) {
  for (const ReportRow& r : rows) {
    if (r.run_throughput.size() > 1) return true;
  }
  return false;
}

// "4650.1–4890.3 (3 runs)"; "-" for a row run once.
std::string ThroughputRange(const ReportRow& r) {
  const std::optional<std::pair<double, double>> range = ThroughputRunRange(r);
  if (!range) return "-";
  return absl::StrFormat("%.1f–%.1f (%d runs)", range->first, range->second,
                         static_cast<int>(r.run_throughput.size()));
}

// "5%", "12% (wide)"; "-" for a row run once.
std::string SpreadCell(const ReportRow& r) {
  const std::optional<double> spread = ThroughputSpread(r);
  if (!spread) return "-";
  return absl::StrFormat("%.0f%%%s", 100 * *spread,
                         *spread > kWideSpread ? " (wide)" : "");
}

std::vector<std::string> Headers(size_t workers, bool val_loss,
                                 bool time_to_target, bool repeated = false) {
  std::vector<std::string> h = {"Parallel type", "PrmSrv"};
  for (size_t w = 0; w < workers; ++w) h.push_back(absl::StrCat("W", w));
  h.push_back("Total");
  h.push_back(repeated ? "Throughput, median run (samples/s)"
                       : "Throughput (samples/s)");
  if (repeated) {
    h.push_back("Runs: slowest–fastest");
    h.push_back("Spread");
  }
  for (const char* c : {"Speedup", "Scaling eff."}) h.push_back(c);
  if (val_loss) h.push_back("Val loss");
  if (time_to_target) h.push_back("Time to target (s)");
  return h;
}

// The integer field `key` of a record, 0 when absent or not an integer.
int64_t IntegerOrZero(const json& j, const char* key) {
  return j.contains(key) && j[key].is_number_integer() ? j[key].get<int64_t>()
                                                       : 0;
}

bool IsNumber(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number();
}

// The curve as [{step, samples, train_wall_s, loss}].
json CurveJson(const std::vector<EvalPoint>& curve) {
  json points = json::array();
  for (const EvalPoint& p : curve) {
    points.push_back({{"step", p.step},
                      {"samples", p.samples},
                      {"train_wall_s", p.train_wall_s},
                      {"loss", p.loss}});
  }
  return points;
}

}  // namespace

std::string TimeToTargetCsv(const ReportRow& row) {
  return row.time_to_target_s ? absl::StrFormat("%.4f", *row.time_to_target_s)
                              : "";
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string ParallelTypeLabel(const ReportRow& row) {
  std::string label = row.display_name;
  if (row.emulated) absl::StrAppend(&label, " (emulated)");
  if (row.precision != "fp32") absl::StrAppend(&label, " (", row.precision, ")");
  return label;
}

// Characters of UTF-8 text (its bytes minus continuation bytes), so that
// "Async PS (τ=2)" pads like its 14 characters, not its 15 bytes.
static size_t DisplayWidth(const std::string& text) {
  size_t n = 0;
  for (unsigned char ch : text) n += (ch & 0xC0) != 0x80;
  return n;
}

std::string MarkdownGrid(const std::vector<std::vector<std::string>>& cells) {
  if (cells.empty()) return "";
  std::vector<size_t> width(cells[0].size(), 3);
  for (const auto& line : cells) {
    for (size_t c = 0; c < line.size() && c < width.size(); ++c) {
      width[c] = std::max(width[c], DisplayWidth(line[c]));
    }
  }
  // First column left-aligned, the numeric ones right-aligned.
  auto format_line = [&](const std::vector<std::string>& line) {
    std::string out = "|";
    for (size_t c = 0; c < width.size(); ++c) {
      const std::string cell = c < line.size() ? line[c] : "";
      const std::string pad(width[c] - DisplayWidth(cell), ' ');
      absl::StrAppend(&out, " ", c == 0 ? cell + pad : pad + cell, " |");
    }
    return out + "\n";
  };
  std::string out = format_line(cells[0]);
  out += "|";
  for (size_t c = 0; c < width.size(); ++c) {
    absl::StrAppend(&out, " ",
                    c == 0 ? ":" + std::string(width[c] - 1, '-')
                           : std::string(width[c] - 1, '-') + ":",
                    " |");
  }
  out += "\n";
  for (size_t i = 1; i < cells.size(); ++i) out += format_line(cells[i]);
  return out;
}

std::string DisplayName(absl::string_view strategy) {
  std::string name(strategy);
  if (!name.empty())
    name[0] = std::toupper(static_cast<unsigned char>(name[0]));
  return name;
}

absl::StatusOr<ReportRow> RowFromFinals(absl::string_view strategy, int prm_srv,
                                        const std::vector<json>& finals) {
  if (finals.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(strategy, ": no final records"));
  }
  ReportRow row;
  row.strategy = std::string(strategy);
  row.display_name = DisplayName(strategy);
  row.prm_srv = prm_srv;
  for (size_t rank = 0; rank < finals.size(); ++rank) {
    const json& f = finals[rank];
    if (!IsNumber(f, "utilization")) {
      return absl::InvalidArgumentError(absl::StrCat(
          strategy, ": final record of rank ", rank, " has no utilization"));
    }
    row.utilization.push_back(f["utilization"].get<double>());
    if (f.contains("emulated") && f["emulated"].is_boolean() &&
        f["emulated"].get<bool>()) {
      row.emulated = true;
    }
  }
  if (!IsNumber(finals[0], "throughput")) {
    return absl::InvalidArgumentError(
        absl::StrCat(strategy, ": final record of rank 0 has no throughput"));
  }
  row.throughput = finals[0]["throughput"].get<double>();
  for (const json& f : finals) {
    auto bytes = [&f](const char* key) { return IntegerOrZero(f, key); };
    row.worker_held_bytes = std::max(
        row.worker_held_bytes, bytes("param_bytes") + bytes("grad_bytes") +
                                   bytes("optimizer_state_bytes"));
    row.worker_optimizer_bytes =
        std::max(row.worker_optimizer_bytes, bytes("optimizer_state_bytes"));
    row.worker_peak_rss_bytes =
        std::max(row.worker_peak_rss_bytes, bytes("peak_rss_bytes"));
    if (IsNumber(f, "emulated_compute_s")) {
      row.emulated_compute_s =
          std::max(row.emulated_compute_s, f["emulated_compute_s"].get<double>());
    }
  }
  if (IsNumber(finals[0], "optimizer_state_per_param")) {
    row.optimizer_state_per_param =
        finals[0]["optimizer_state_per_param"].get<double>();
  }
  if (finals[0].contains("variant") && finals[0]["variant"].is_string()) {
    row.variant = finals[0]["variant"].get<std::string>();
  }
  // Emulated compute has no model to evaluate: whatever loss the synthetic
  // model printed means nothing, so the row has none ("-", null, empty).
  if (!row.emulated && IsNumber(finals[0], "eval_loss")) {
    row.eval_loss = finals[0]["eval_loss"].get<double>();
  }
  const json& f0 = finals[0];
  if (IsNumber(f0, "measured_steps") &&
      f0["measured_steps"].get<double>() > 0) {
    const double steps = f0["measured_steps"].get<double>();
    // The slowest rank's compute sets a synchronous step's pace; its CPU
    // time is that rank's, where every rank reported one.
    bool cpu_known = true;
    for (const json& f : finals) {
      if (IsNumber(f, "compute_s") && IsNumber(f, "measured_steps") &&
          f["measured_steps"].get<double>() > 0) {
        const double measured = f["measured_steps"].get<double>();
        const double compute = f["compute_s"].get<double>() / measured;
        cpu_known = cpu_known && IsNumber(f, "compute_cpu_s");
        if (compute > row.compute_step_s) {
          row.compute_step_s = compute;
          if (cpu_known) {
            row.compute_cpu_step_s =
                f["compute_cpu_s"].get<double>() / measured;
          }
        }
      }
    }
    if (!cpu_known) row.compute_cpu_step_s = 0;
    if (IsNumber(f0, "compute_threads") &&
        f0["compute_threads"].get<double>() >= 1) {
      row.compute_threads = f0["compute_threads"].get<int>();
    }
    if (IsNumber(f0, "wall_s")) row.step_s = f0["wall_s"].get<double>() / steps;
    if (f0.contains("gradient_ready") && f0["gradient_ready"].is_object() &&
        f0["gradient_ready"].contains("tensors") &&
        f0["gradient_ready"]["tensors"].is_array()) {
      for (const json& t : f0["gradient_ready"]["tensors"]) {
        if (!IsNumber(t, "bytes") || !IsNumber(t, "ready_s")) {
          row.gradient_ready.clear();  // malformed: none rather than part
          break;
        }
        row.gradient_ready.push_back(
            {t["bytes"].get<double>(), t["ready_s"].get<double>()});
      }
    }
    if (f0.contains("tensor_shapes") && f0["tensor_shapes"].is_array()) {
      for (const json& shape : f0["tensor_shapes"]) {
        std::vector<int64_t> dims;
        bool ok = shape.is_array();
        for (const json& d : ok ? shape : json::array()) {
          ok = ok && d.is_number_integer() && d.get<int64_t>() >= 1;
          if (ok) dims.push_back(d.get<int64_t>());
        }
        if (!ok) {
          row.tensor_shapes.clear();  // malformed: none rather than part
          break;
        }
        row.tensor_shapes.push_back(std::move(dims));
      }
    }
    if (IsNumber(f0, "ring_critical_bytes")) {
      row.ring_critical_bytes = f0["ring_critical_bytes"].get<double>() / steps;
    }
    if (IsNumber(f0, "bytes_sent")) {
      row.bytes_sent_per_step = f0["bytes_sent"].get<double>() / steps;
    }
  }
  // The bucket caps and chunk the run used, where its strategy has them.
  for (const auto& [key, field] :
       {std::pair<const char*, double*>{"ring_bucket_bytes",
                                        &row.ring_bucket_bytes},
        {"ring_first_bucket_bytes", &row.ring_first_bucket_bytes},
        {"ps_chunk_bytes", &row.ps_chunk_bytes}}) {
    if (IsNumber(f0, key)) *field = f0[key].get<double>();
  }
  for (const auto& [key, field] :
       {std::pair<const char*, int64_t*>{"warmup_steps", &row.warmup_steps},
        {"start_step", &row.start_step},
        {"measured_steps", &row.measured_steps},
        {"staleness", &row.staleness},
        {"ranks_per_host", &row.ranks_per_host},
        {"model_bytes", &row.model_bytes},
        {"num_tensors", &row.num_tensors}}) {
    if (IsNumber(f0, key)) *field = f0[key].get<int64_t>();
  }
  if (f0.contains("strategy_options") && f0["strategy_options"].is_object()) {
    for (const auto& [flag, value] : f0["strategy_options"].items()) {
      if (value.is_string()) row.strategy_options[flag] = value.get<std::string>();
    }
  }
  if (finals[0].contains("precision") && finals[0]["precision"].is_string()) {
    row.precision = finals[0]["precision"].get<std::string>();
  }
  if (finals[0].contains("device") && finals[0]["device"].is_string()) {
    row.device = finals[0]["device"].get<std::string>();
  }
  if (finals[0].contains("model") && finals[0]["model"].is_string()) {
    row.model = finals[0]["model"].get<std::string>();
  }
  return row;
}

void AddServerFinals(const std::vector<json>& server_finals, ReportRow* row) {
  for (const json& f : server_finals) {
    row->server_state_bytes =
        std::max(row->server_state_bytes, IntegerOrZero(f, "state_bytes"));
    row->server_peak_rss_bytes = std::max(row->server_peak_rss_bytes,
                                          IntegerOrZero(f, "peak_rss_bytes"));
  }
}

bool AnyCurve(const std::vector<ReportRow>& rows) {
  return std::any_of(rows.begin(), rows.end(),
                     [](const ReportRow& r) { return !r.curve.empty(); });
}

std::optional<std::pair<double, double>> ThroughputRunRange(
    const ReportRow& row) {
  if (row.run_throughput.size() < 2) return std::nullopt;
  const auto [lo, hi] = std::minmax_element(row.run_throughput.begin(),
                                            row.run_throughput.end());
  return std::make_pair(*lo, *hi);
}

std::optional<double> ThroughputSpread(const ReportRow& row) {
  const std::optional<std::pair<double, double>> range =
      ThroughputRunRange(row);
  if (!range || row.throughput <= 0) return std::nullopt;
  return (range->second - range->first) / row.throughput;
}

std::vector<std::string> EmulatedComputeMisses(
    const std::vector<ReportRow>& rows) {
  std::vector<std::string> misses;
  for (const ReportRow& r : rows) {
    if (!r.emulated || r.emulated_compute_s <= 0 || r.compute_step_s <= 0) {
      continue;
    }
    const double off = r.compute_step_s / r.emulated_compute_s - 1;
    if (std::abs(off) <= kEmulatedComputeTolerance) continue;
    misses.push_back(absl::StrFormat(
        "%s n=%d (%.1f ms a step against %.1f ms emulated, %+.0f%%)",
        ParallelTypeLabel(r), r.workers(), 1e3 * r.compute_step_s,
        1e3 * r.emulated_compute_s, 100 * off));
  }
  return misses;
}

double TotalUtilization(const ReportRow& row) {
  double total = 0;
  for (double u : row.utilization) total += u;
  return total;
}

std::optional<double> BaselineThroughput(const std::vector<ReportRow>& rows) {
  for (const ReportRow& r : rows) {
    if (r.strategy == "baseline" && r.throughput > 0) return r.throughput;
  }
  return std::nullopt;
}

std::optional<double> Speedup(const ReportRow& row,
                              std::optional<double> baseline) {
  if (!baseline || *baseline <= 0) return std::nullopt;
  return row.throughput / *baseline;
}

std::optional<double> ScalingEfficiency(const ReportRow& row,
                                        std::optional<double> baseline) {
  const std::optional<double> s = Speedup(row, baseline);
  if (!s || row.utilization.empty()) return std::nullopt;
  return *s / row.utilization.size();
}

std::string MarkdownTable(const std::vector<ReportRow>& rows) {
  const size_t workers = MaxWorkers(rows);
  const std::optional<double> base = BaselineThroughput(rows);
  const bool val_loss = AnyEvalLoss(rows);
  const bool time_to_target = AnyCurve(rows);
  const bool repeated = AnyRepeated(rows);
  std::vector<std::vector<std::string>> cells = {
      Headers(workers, val_loss, time_to_target, repeated)};
  for (const ReportRow& r : rows) {
    std::vector<std::string> line = {ParallelTypeLabel(r),
                                     absl::StrCat(r.prm_srv)};
    for (size_t w = 0; w < workers; ++w) {
      line.push_back(w < r.utilization.size()
                         ? absl::StrFormat("%.0f%%", 100 * r.utilization[w])
                         : "0");
    }
    line.push_back(Fixed(TotalUtilization(r), 2));
    line.push_back(Fixed(r.throughput, 1));
    if (repeated) {
      line.push_back(ThroughputRange(r));
      line.push_back(SpreadCell(r));
    }
    line.push_back(Fixed(Speedup(r, base), 2));
    line.push_back(Fixed(ScalingEfficiency(r, base), 2));
    if (val_loss) line.push_back(Fixed(r.eval_loss, 4));
    if (time_to_target) line.push_back(Fixed(r.time_to_target_s, 2));
    cells.push_back(std::move(line));
  }
  return MarkdownGrid(cells);
}

std::string CsvTable(const std::vector<ReportRow>& rows) {
  const size_t workers = MaxWorkers(rows);
  const std::optional<double> base = BaselineThroughput(rows);
  std::vector<std::string> header = {"strategy", "parallel_type", "prm_srv"};
  for (size_t w = 0; w < workers; ++w) header.push_back(absl::StrCat("W", w));
  for (const char* c : {"total", "throughput", "speedup", "scaling_eff",
                        "eval_loss", "emulated", "time_to_target_s"}) {
    header.push_back(c);
  }
  std::string out = absl::StrJoin(header, ",") + "\n";
  for (const ReportRow& r : rows) {
    std::vector<std::string> f = {CsvField(r.strategy),
                                  CsvField(ParallelTypeLabel(r)),
                                  absl::StrCat(r.prm_srv)};
    for (size_t w = 0; w < workers; ++w) {
      f.push_back(w < r.utilization.size()
                      ? absl::StrFormat("%.4f", r.utilization[w])
                      : "0");
    }
    const std::optional<double> s = Speedup(r, base);
    const std::optional<double> e = ScalingEfficiency(r, base);
    f.push_back(absl::StrFormat("%.4f", TotalUtilization(r)));
    f.push_back(absl::StrFormat("%.3f", r.throughput));
    f.push_back(s ? absl::StrFormat("%.4f", *s) : "");
    f.push_back(e ? absl::StrFormat("%.4f", *e) : "");
    f.push_back(r.eval_loss ? absl::StrFormat("%.6g", *r.eval_loss) : "");
    f.push_back(r.emulated ? "true" : "false");
    f.push_back(TimeToTargetCsv(r));
    out += absl::StrJoin(f, ",") + "\n";
  }
  return out;
}

json JsonReport(const std::vector<ReportRow>& rows) {
  const std::optional<double> base = BaselineThroughput(rows);
  json out;
  out["columns"] = Headers(MaxWorkers(rows), AnyEvalLoss(rows), AnyCurve(rows),
                           AnyRepeated(rows));
  out["rows"] = json::array();
  for (const ReportRow& r : rows) {
    const std::optional<double> s = Speedup(r, base);
    const std::optional<double> e = ScalingEfficiency(r, base);
    out["rows"].push_back(
        {{"strategy", r.strategy},
         {"parallel_type", ParallelTypeLabel(r)},
         {"prm_srv", r.prm_srv},
         {"workers", r.utilization.size()},
         {"utilization", r.utilization},
         {"total", TotalUtilization(r)},
         {"throughput", r.throughput},
         {"speedup", s ? json(*s) : json()},
         {"scaling_eff", e ? json(*e) : json()},
         {"eval_loss", r.eval_loss ? json(*r.eval_loss) : json()},
         {"emulated", r.emulated},
         {"precision", r.precision},
         {"time_to_target_s",
          r.time_to_target_s ? json(*r.time_to_target_s) : json()},
         {"curve", CurveJson(r.curve)}});
    const std::optional<double> spread = ThroughputSpread(r);
    json& row = out["rows"].back();
    row["throughput_runs"] = spread ? json(r.run_throughput) : json();
    row["total_runs"] = spread ? json(r.run_total_utilization) : json();
    row["throughput_spread"] = spread ? json(*spread) : json();
    row["wide_spread"] = spread.has_value() && *spread > kWideSpread;
    row["seeds"] = json::array();
    for (const SeedRun& seed : r.seed_runs) {
      row["seeds"].push_back(
          {{"seed", seed.seed},
           {"eval_loss", seed.eval_loss ? json(*seed.eval_loss) : json()},
           {"time_to_target_s", seed.time_to_target_s
                                    ? json(*seed.time_to_target_s)
                                    : json()}});
    }
    row["loss_gap"] =
        r.loss_gap ? json{{"median", r.loss_gap->median},
                          {"low", r.loss_gap->low},
                          {"high", r.loss_gap->high}}
                   : json();
    row["bytes_sent_per_step"] =
        r.bytes_sent_per_step >= 0 ? json(r.bytes_sent_per_step) : json();
    const std::optional<double> ratio = AllReduceShare(r);
    row["vs_allreduce_bytes"] = ratio ? json(*ratio) : json();
  }
  return out;
}

std::optional<double> AllReduceShare(const ReportRow& row) {
  const int n = row.workers();
  if (n < 2 || row.model_bytes <= 0 || row.bytes_sent_per_step < 0) {
    return std::nullopt;
  }
  const double all_reduce =
      2.0 * (n - 1) / n * static_cast<double>(row.model_bytes);
  return row.bytes_sent_per_step / all_reduce;
}

}  // namespace ringside

// Comparison report: pure functions that turn per-strategy run results into
// the table of the GPT-2 data-parallel study (arXiv 2206.06356):
//
//   Parallel type | PrmSrv | W0 | ... | W{n-1} | Total |
//   Throughput (samples/s) | Speedup | Scaling eff. | Val loss |
//   Time to target (s)
//
// W cells are each worker's utilization in percent ("85%"), "0" for workers
// a row does not have; Total is the sum of the utilizations as a fraction
// (2 decimals); speedup = throughput / baseline throughput; scaling
// efficiency = speedup / the row's worker count; Val loss is rank 0's final
// validation loss (shown when any row has one: every strategy trains the
// same model, so a strategy that diverges shows here); Time to target is
// the training time until rank 0's validation loss first reached the
// sweep's target loss (loss_curves.h; shown when any row has a loss curve).
// Rows with emulated compute are labelled "(emulated)" in every output.
// When rows were run several times (compare --repeats; repeats.h), the
// throughput is the median run's, followed by "Runs: slowest–fastest" and
// "Spread" (ThroughputSpread; marked "(wide)" over kWideSpread).
//
// Thread-safety: stateless functions, safe to call concurrently.
#ifndef RINGSIDE_EXPERIMENTS_REPORT_REPORT_H_
#define RINGSIDE_EXPERIMENTS_REPORT_REPORT_H_

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ringside {

// One mid-run evaluation of rank 0: its {"event":"eval"} record.
struct EvalPoint {
  int64_t step = 0;         // the step after which it evaluated (0-based)
  int64_t samples = 0;      // global training samples seen by then
  double train_wall_s = 0;  // training wall time since the first step
                            // started, evaluations excluded (s)
  double loss = 0;          // validation loss of rank 0's parameters
};

// The strategy name of the PyTorch DDP row (experiments/comparison/ddp_row.h) in
// records, CSV and JSON.
inline constexpr char kDdpStrategy[] = "ddp";

// One gradient of a row's backward, from rank 0's final record
// (gradient_ready): its bytes and the mean seconds from the step's compute
// start until it was ready; in the order they became ready.
struct GradientReadyTime {
  double bytes = 0;
  double ready_s = 0;
};

// A figure over several runs: their median (the lower middle of an even
// count) and the lowest and highest.
struct ValueSpread {
  double median = 0;
  double low = 0;
  double high = 0;
};

// One seed's training run of a row (compare --seeds): the seed (the
// workers' --seed and --data_seed), rank 0's final validation loss, its
// curve and its time to the sweep's target loss (loss_curves.h).
struct SeedRun {
  uint64_t seed = 0;
  std::optional<double> eval_loss;
  std::vector<EvalPoint> curve;
  std::optional<double> time_to_target_s;
};

struct ReportRow {
  std::string strategy;      // registry name, e.g. "sps"; "baseline" = base
  std::string display_name;  // table label, e.g. "SPS" (the registry's)
  // The run's setting from its final record ("τ=2", "2×4"; "" = none).
  std::string variant;
  int prm_srv = 0;           // number of parameter-server processes
  std::vector<double> utilization;  // per worker (index = rank), 0..1
  double throughput = 0;            // global samples/s (rank 0's value)
  std::optional<double> eval_loss;  // rank 0's final validation loss
  // Rank 0's validation loss during training, in step order (empty: none;
  // never for emulated compute), and the training seconds until it first
  // reached the sweep's target loss (loss_curves.h: SetEvalCurve,
  // SetTimesToTarget; nullopt: not reached, no curve or no target).
  std::vector<EvalPoint> curve;
  std::optional<double> time_to_target_s;
  // Every seed's training run, in seed order, when compare trained the row
  // with several seeds (--seeds; empty: one). The row's curve is the first
  // seed's; its eval_loss and time_to_target_s are then the medians over
  // the seeds (seed_runs.h).
  std::vector<SeedRun> seed_runs;
  // Per seed, the final validation loss less the exact strategies' at the
  // same worker count and seed, over the seeds (seed_runs.h: SetLossGaps;
  // nullopt: one seed, no loss or no exact row to compare with).
  std::optional<ValueSpread> loss_gap;
  bool emulated = false;            // any worker ran emulated compute
  // What the emulated compute was meant to take a step (the largest of the
  // ranks' final records' emulated_compute_s; 0: none or not recorded),
  // against which compute_step_s shows whether it held.
  double emulated_compute_s = 0;
  std::string device = "cpu";       // rank 0's "device" ("cpu", "cuda")
  // rank 0's "precision" (models/precision.h: "fp32", "bf16"; an older
  // record without one computed in fp32)
  std::string precision = "fp32";
  std::string model;                // rank 0's "model", e.g. "mlp"; may be ""
  // Per measured step (0 when the records lack them): compute (forward +
  // backward + local optimizer) of the slowest rank, which sets the pace
  // of a synchronous step, and rank 0's wall time.
  double compute_step_s = 0;
  // The same rank's compute CPU time per measured step (its final record's
  // compute_cpu_s: the training thread's CPU clock); 0 when a rank's
  // record lacks it (a device, emulated compute, several compute threads).
  double compute_cpu_step_s = 0;
  // Compute threads per worker (rank 0's final record's compute_threads:
  // Eigen's threads on a host worker; 1 where the record lacks it).
  int compute_threads = 1;
  double step_s = 0;
  // Every run's step_s when compare ran this row several times
  // (--repeats), in running order; the row's other measures are those of
  // the run with the median step (repeats.h: MedianRun). Empty: run once.
  std::vector<double> run_step_s;
  // Every run's throughput and total utilization alike (empty: run once).
  std::vector<double> run_throughput;
  std::vector<double> run_total_utilization;
  // The model (0 when the record lacks them): gradient bytes exchanged per
  // step and gradient tensors.
  int64_t model_bytes = 0;
  int64_t num_tensors = 0;
  // The gradient tensors' shapes in the layout's order (rank 0's record's
  // tensor_shapes; empty: not reported).
  std::vector<std::vector<int64_t>> tensor_shapes;
  // Sharded strategies: the bytes per step their rings keep the busiest
  // link sending (rank 0's ring_critical_bytes / measured steps; 0: none).
  double ring_critical_bytes = 0;
  // The payload bytes rank 0 sent per measured step (its final record's
  // bytes_sent / measured steps; < 0: not reported).
  double bytes_sent_per_step = -1;
  // Strategies that bucket their gradients: the caps they ran with (bytes;
  // < 0: not reported, the cost model's defaults or flags hold).
  double ring_bucket_bytes = -1;
  double ring_first_bucket_bytes = -1;
  // Parameter-server strategies: the chunk they ran with (bytes; 0: the
  // workers' AutoChunkBytes; < 0: not reported).
  double ps_chunk_bytes = -1;
  // When rank 0's gradients became ready in backward (empty: not
  // reported, e.g. a CUDA worker or an older record).
  std::vector<GradientReadyTime> gradient_ready;
  // Rank 0's warm-up steps, not measured (< 0: not reported), the step it
  // started at (> 0: resumed from a checkpoint) and its measured steps
  // (0: not reported): the window is [max(warmup, start), + measured).
  int64_t warmup_steps = -1;
  int64_t start_step = 0;
  int64_t measured_steps = 0;
  // The staleness bound τ of a strategy that has one (async_ps; < 0: not
  // reported: an older record, whose variant "τ=2" says it).
  int64_t staleness = -1;
  // The ranks per host of a strategy that groups them (hierarchical,
  // byteps; < 0: not reported: an older record, whose variant "2×4" says
  // it).
  int64_t ranks_per_host = -1;
  // The strategy's own worker flags and their values as the run had them
  // (the final record's strategy_options; empty: not reported).
  std::map<std::string, std::string> strategy_options;
  // The cost model's strategy that predicts this row ("" = none) and the
  // bytes on the wire per model byte, from the registry (ListedStrategy).
  std::string modelled_as;
  double wire_bytes_per_model_byte = 1.0;
  // The row's server ran beside rank 0 (compare's placement=rank0).
  bool servers_beside_rank0 = false;
  // How its updates differ from the exact strategies' where the registry
  // says so ("" = as the cost model's formula says).
  std::string updates;
  // Memory, the largest over ranks / servers (0 = not reported): bytes a
  // worker holds for parameters + gradients + optimizer state, of them the
  // optimizer state, and its peak RSS; a server's state (parameters,
  // optimizer state, accumulators) and peak RSS (its server_final line).
  int64_t worker_held_bytes = 0;
  int64_t worker_optimizer_bytes = 0;
  int64_t worker_peak_rss_bytes = 0;
  int64_t server_state_bytes = 0;
  int64_t server_peak_rss_bytes = 0;
  // The optimizer's whole state per parameter (s of the cost model's memory
  // formulas: plain SGD 0, momentum 1, Adam 2); -1 when not reported.
  double optimizer_state_per_param = -1;

  int workers() const { return static_cast<int>(utilization.size()); }
};

// The label of a row whose registry entry is not at hand: the name with its
// first letter capitalized ("gossip" -> "Gossip"). compare names its rows
// from the registry (worker --list_strategies), e.g. "SPS".
std::string DisplayName(absl::string_view strategy);

// The row's "Parallel type" cell: display_name, plus " (emulated)" when the
// row ran emulated compute and its precision when not fp32 ("Ring (bf16)").
std::string ParallelTypeLabel(const ReportRow& row);

// Markdown table of `cells` (cells[0] = header; every line as long as the
// header): columns padded to equal width (at least 3), the first
// left-aligned, the others right-aligned; ends in '\n'.
std::string MarkdownGrid(const std::vector<std::vector<std::string>>& cells);

// `s` as one CSV field: quoted (with '"' doubled) when it holds a comma, a
// quote or a newline; unchanged otherwise.
std::string CsvField(const std::string& s);

// The row's time_to_target_s as a CSV field: 4 decimals, "" without one.
std::string TimeToTargetCsv(const ReportRow& row);

// Builds a row from the workers' "final" records (index = rank). Fails with
// INVALID_ARGUMENT when there are none or a record lacks a numeric
// "utilization" (any rank) or "throughput" (rank 0).
// (Also the worker memory fields, from param_bytes, grad_bytes,
// optimizer_state_bytes and peak_rss_bytes where the records have them.)
absl::StatusOr<ReportRow> RowFromFinals(
    absl::string_view strategy, int prm_srv,
    const std::vector<nlohmann::json>& finals);

// The server memory fields of `row`: the largest state_bytes and
// peak_rss_bytes of the servers' "server_final" records (fields absent:
// left as they are).
void AddServerFinals(const std::vector<nlohmann::json>& server_finals,
                     ReportRow* row);

// Whether some row has a loss curve (ReportRow::curve).
bool AnyCurve(const std::vector<ReportRow>& rows);

// A repeated row's slowest and fastest run's throughput (run_throughput's
// least and greatest); nullopt for a row run once.
std::optional<std::pair<double, double>> ThroughputRunRange(
    const ReportRow& row);

// A repeated row's throughput spread: (fastest − slowest run) / the
// row's throughput (its median run's); nullopt for a row run once.
std::optional<double> ThroughputSpread(const ReportRow& row);

// Spreads wider than this share are marked "(wide)" in the tables.
inline constexpr double kWideSpread = 0.10;

// Emulated compute is meant to hold its time whatever else runs: it sleeps
// for what its arithmetic leaves. The rows whose measured compute per step
// (the slowest rank's, ReportRow::compute_step_s) differs from the time
// they emulated (emulated_compute_s) by more than this share do not hold
// it, as EmulatedComputeMisses lists them: "Ring n=4 (680.0 ms a step
// against 20.0 ms emulated, +3300%)".
inline constexpr double kEmulatedComputeTolerance = 0.05;
std::vector<std::string> EmulatedComputeMisses(
    const std::vector<ReportRow>& rows);

// Sum of the row's utilizations (a fraction; 4 workers at 90% = 3.6).
double TotalUtilization(const ReportRow& row);

// Throughput of the first row named "baseline", if any has one > 0.
std::optional<double> BaselineThroughput(const std::vector<ReportRow>& rows);

// throughput / baseline; nullopt without a baseline.
std::optional<double> Speedup(const ReportRow& row,
                              std::optional<double> baseline);

// Speedup / number of workers in the row; nullopt without a baseline.
std::optional<double> ScalingEfficiency(const ReportRow& row,
                                        std::optional<double> baseline);

// Markdown table, columns padded to equal width, one line per row, ending
// in '\n'. W columns go up to the largest worker count of any row; the
// Val loss column (4 decimals, "-" for a row without one) only when some
// row has an eval_loss; the Time to target (s) column (2 decimals, "-"
// where not reached) only when some row has a curve.
std::string MarkdownTable(const std::vector<ReportRow>& rows);

// CSV with a header line: strategy, parallel_type, prm_srv, W0.., total,
// throughput, speedup, scaling_eff, eval_loss, emulated, time_to_target_s.
// Utilizations as fractions; speedup/efficiency/eval_loss/time_to_target_s
// empty without a value.
std::string CsvTable(const std::vector<ReportRow>& rows);

// {"columns":[..markdown headers..], "rows":[{strategy, parallel_type,
// prm_srv, workers, utilization[], total, throughput, speedup, scaling_eff,
// eval_loss, emulated, time_to_target_s, curve:[{step, samples,
// train_wall_s, loss}], seeds:[{seed, eval_loss, time_to_target_s}],
// loss_gap:{median, low, high}, ...}]}; speedup/scaling_eff null without a
// baseline, eval_loss, time_to_target_s and loss_gap null without one,
// seeds empty for a row trained with one seed (ReportRow::seed_runs).
nlohmann::json JsonReport(const std::vector<ReportRow>& rows);

// What `row` sent per step against a ring all-reduce of its model,
// 2(n−1)/n·M (the exact strategies' bytes; < 1: it sends less); nullopt
// at n < 2 or where the record lacks the bytes or the model's size.
std::optional<double> AllReduceShare(const ReportRow& row);

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_REPORT_REPORT_H_

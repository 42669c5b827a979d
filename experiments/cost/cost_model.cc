#include "experiments/cost/cost_model.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "experiments/cost/formulas/formula_registry.h"
#include "experiments/cost/formulas/formula_support.h"

namespace ringside {
namespace {

absl::Status Bad(absl::string_view field, double value,
                 absl::string_view must) {
  return absl::InvalidArgumentError(
      absl::StrCat("cost model: ", field, " must be ", must, ", got ", value));
}

absl::Status UnknownStrategy(absl::string_view what,
                             absl::string_view strategy) {
  return absl::InvalidArgumentError(
      absl::StrCat("cost model: ", what, " '", strategy,
                   "'; known: ", absl::StrJoin(CostModelStrategies(), ", ")));
}

// The cores' demand of the file comment: CPU seconds per step of every
// process together.
double CpuDemandSeconds(const StrategyFormula& formula, const CostInputs& in,
                        const Prediction& p) {
  const double n = static_cast<double>(in.workers);
  const double compute_cpu = in.compute_cpu_s > 0 ? in.compute_cpu_s
                             : in.compute_emulated ? 0.0
                                                   : in.compute_s;
  return n * compute_cpu + formula.CommCpuDemandSeconds(in, p) +
         formula.BytesSentPerStep(in) * in.wire_cpu_byte_s;
}

// Fills p.exposed_comm_s and p.backward_hidden_s from in.gradient_ready
// for a strategy that communicates in backward (the file comment; the
// formula runs its calls); false for the others, which overlap nothing.
bool SimulateBackwardOverlap(const StrategyFormula& formula,
                             const CostInputs& in, Prediction& p) {
  double total_bytes = 0, backward_end = 0;
  for (const GradientReady& g : in.gradient_ready) {
    total_bytes += g.bytes;
    backward_end = std::max(backward_end, g.ready_s);
  }
  if (!(total_bytes > 0)) return false;
  // u: what needs the compute's cores: beside emulated compute, which
  // sleeps, the wake-ups; beside real compute every CPU term, and on
  // loopback the link's seconds too (its bytes are the cores' copies).
  double u = in.compute_emulated ? p.cpu_s - p.streamed_cpu_s : p.cpu_s;
  if (!in.compute_emulated && !in.cpu_streams_with_link) u += p.wire_s;
  BackwardBudget budget;
  budget.overlappable_s = std::max(0.0, p.comm_s - u - p.overhead_s);
  budget.total_bytes = total_bytes;
  BackwardRun run;
  if (!formula.SimulateBackward(in, p, budget, run)) return false;
  const double tail = std::max(0.0, run.end_s - backward_end);
  p.backward_hidden_s = std::max(0.0, run.busy_s - tail);
  p.exposed_comm_s = tail + run.after_s + run.fixed_s + u;
  return true;
}

// The per-byte and per-call fields of CpuCosts with their JSON keys; an
// optional one reads as 0 when absent (compare runs from before it was
// measured).
struct CpuCostField {
  const char* key;
  double CpuCosts::*field;
  bool optional;
};
std::vector<CpuCostField> CpuCostFields() {
  return {{"allreduce_byte_s", &CpuCosts::allreduce_byte_s, false},
          {"half_allreduce_byte_s", &CpuCosts::half_allreduce_byte_s, false},
          {"reduce_scatter_byte_s", &CpuCosts::reduce_scatter_byte_s, false},
          {"allgather_byte_s", &CpuCosts::allgather_byte_s, false},
          {"collective_step_s", &CpuCosts::collective_step_s, false},
          {"collective_wake_s", &CpuCosts::collective_wake_s, true},
          {"half_collective_wake_s", &CpuCosts::half_collective_wake_s, true},
          {"half_convert_byte_s", &CpuCosts::half_convert_byte_s, true},
          {"refault_byte_s", &CpuCosts::refault_byte_s, true},
          {"ps_worker_byte_s", &CpuCosts::ps_worker_byte_s, false},
          {"ps_server_byte_s", &CpuCosts::ps_server_byte_s, false},
          {"ps_round_s", &CpuCosts::ps_round_s, false},
          {"ps_tcp_worker_byte_s", &CpuCosts::ps_tcp_worker_byte_s, true},
          {"ps_tcp_server_byte_s", &CpuCosts::ps_tcp_server_byte_s, true},
          {"ps_tcp_round_s", &CpuCosts::ps_tcp_round_s, true},
          {"ps_sharded_worker_byte_s", &CpuCosts::ps_sharded_worker_byte_s,
           true},
          {"ps_sharded_server_byte_s", &CpuCosts::ps_sharded_server_byte_s,
           true},
          {"ps_sharded_round_s", &CpuCosts::ps_sharded_round_s, true},
          {"ps_round_cpu_byte_s", &CpuCosts::ps_round_cpu_byte_s, true},
          {"ps_round_cpu_worker_byte_s",
           &CpuCosts::ps_round_cpu_worker_byte_s, true},
          {"copy_byte_s", &CpuCosts::copy_byte_s, true},
          {"lowrank_multiply_add_s", &CpuCosts::lowrank_multiply_add_s, true},
          {"error_feedback_element_s", &CpuCosts::error_feedback_element_s,
           true},
          {"topk_element_s", &CpuCosts::topk_element_s, true},
          {"sign_pack_element_s", &CpuCosts::sign_pack_element_s, true},
          {"sign_add_element_s", &CpuCosts::sign_add_element_s, true}};
}

}  // namespace

nlohmann::json CpuCostsJson(const CpuCosts& c) {
  nlohmann::json j;
  for (const auto& [key, field, optional] : CpuCostFields()) {
    j[key] = c.*field;
  }
  j["cores"] = c.cores;
  j["ps_sharded_servers"] = c.ps_sharded_servers;
  j["ps_round_cpu_servers"] = c.ps_round_cpu_servers;
  return j;
}

absl::StatusOr<CpuCosts> CpuCostsFromJson(const nlohmann::json& j) {
  CpuCosts c;
  if (!j.is_object()) {
    return absl::InvalidArgumentError("calibration: not a JSON object");
  }
  for (const auto& [key, field, optional] : CpuCostFields()) {
    if (optional && !j.contains(key)) continue;
    if (!j.contains(key) || !j[key].is_number() ||
        !(j[key].get<double>() >= 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("calibration: '", key, "' must be a number >= 0, got ",
                       j.contains(key) ? j[key].dump() : "nothing"));
    }
    c.*field = j[key].get<double>();
  }
  if (!j.contains("cores") || !j["cores"].is_number_integer() ||
      j["cores"].get<int>() < 0) {
    return absl::InvalidArgumentError(
        "calibration: 'cores' must be an integer >= 0");
  }
  c.cores = j["cores"].get<int>();
  // Server counts older runs did not measure may be missing (0).
  for (const auto& [key, field] :
       {std::pair<const char*, int*>{"ps_sharded_servers",
                                     &c.ps_sharded_servers},
        {"ps_round_cpu_servers", &c.ps_round_cpu_servers}}) {
    if (!j.contains(key)) continue;
    if (!j[key].is_number_integer() || j[key].get<int>() < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "calibration: '", key, "' must be an integer >= 0"));
    }
    *field = j[key].get<int>();
  }
  return c;
}

absl::Status ValidateCostInputs(const CostInputs& in) {
  // Written as !(x > 0) so that NaN is rejected too.
  if (!(in.compute_s > 0) || std::isinf(in.compute_s)) {
    return Bad("compute_s (t_c)", in.compute_s, "> 0 and finite");
  }
  if (!(in.compute_cpu_s >= 0) || std::isinf(in.compute_cpu_s)) {
    return Bad("compute_cpu_s (t_c')", in.compute_cpu_s, ">= 0 and finite");
  }
  if (!(in.wire_cpu_byte_s >= 0) || std::isinf(in.wire_cpu_byte_s)) {
    return Bad("wire_cpu_byte_s (c_w)", in.wire_cpu_byte_s, ">= 0 and finite");
  }
  if (!(in.link_cpu_byte_s >= 0) || std::isinf(in.link_cpu_byte_s)) {
    return Bad("link_cpu_byte_s (y)", in.link_cpu_byte_s, ">= 0 and finite");
  }
  if (!(in.model_bytes > 0) || std::isinf(in.model_bytes)) {
    return Bad("model_bytes (M)", in.model_bytes, "> 0 and finite");
  }
  if (in.num_tensors < 1) {
    return Bad("num_tensors (T)", static_cast<double>(in.num_tensors), ">= 1");
  }
  if (in.workers < 1) {
    return Bad("workers (n)", static_cast<double>(in.workers), ">= 1");
  }
  if (in.servers < 1) {
    return Bad("servers (K)", static_cast<double>(in.servers), ">= 1");
  }
  for (const std::vector<int64_t>& shape : in.tensor_shapes) {
    for (int64_t d : shape) {
      if (d < 1) {
        return Bad("a tensor_shapes dimension", static_cast<double>(d), ">= 1");
      }
    }
  }
  if (!(in.bandwidth_Bps > 0) || std::isinf(in.bandwidth_Bps)) {
    return Bad("bandwidth (B)", in.bandwidth_Bps, "> 0 and finite");
  }
  if (!(in.latency_s >= 0) || std::isinf(in.latency_s)) {
    return Bad("latency (alpha)", in.latency_s, ">= 0 and finite");
  }
  if (!(in.fusion_threshold_bytes >= 0) ||
      std::isinf(in.fusion_threshold_bytes)) {
    return Bad("fusion_threshold_bytes (F)", in.fusion_threshold_bytes,
               ">= 0 and finite");
  }
  if (!(in.cycle_s >= 0) || std::isinf(in.cycle_s)) {
    return Bad("cycle_s (tau)", in.cycle_s, ">= 0 and finite");
  }
  if (!(in.bucket_bytes >= 0) || std::isinf(in.bucket_bytes) ||
      !(in.first_bucket_bytes >= 0) || std::isinf(in.first_bucket_bytes)) {
    return Bad("bucket_bytes / first_bucket_bytes",
               std::min(in.bucket_bytes, in.first_bucket_bytes),
               ">= 0 and finite");
  }
  if (!(in.ring_critical_bytes >= 0) || std::isinf(in.ring_critical_bytes)) {
    return Bad("ring_critical_bytes", in.ring_critical_bytes,
               ">= 0 and finite (0: the balanced formula)");
  }
  if (!(in.ps_chunk_bytes >= 0) || std::isinf(in.ps_chunk_bytes)) {
    return Bad("ps_chunk_bytes (C)", in.ps_chunk_bytes,
               ">= 0 and finite (0: AutoChunkBytes)");
  }
  if (in.staleness < 0) {
    return Bad("staleness (tau_s)", static_cast<double>(in.staleness),
               ">= 0 (0: synchronous)");
  }
  if (in.ranks_per_host < 0) {
    return Bad("ranks_per_host (r)", static_cast<double>(in.ranks_per_host),
               ">= 0 (0: every worker on one host)");
  }
  if (!(in.compute_slowdown >= 0) || std::isinf(in.compute_slowdown)) {
    return Bad("compute_slowdown (sigma)", in.compute_slowdown,
               ">= 0 and finite (0: not priced)");
  }
  if (!(in.sync_fixed_s >= 0) || std::isinf(in.sync_fixed_s)) {
    return Bad("sync_fixed (f)", in.sync_fixed_s,
               ">= 0 and finite (0: not priced)");
  }
  if (in.workers_per_link < 1) {
    return Bad("workers_per_link", static_cast<double>(in.workers_per_link),
               ">= 1");
  }
  if (in.servers_per_host < 0 || in.server_hosts < 0) {
    return Bad("servers_per_host / server_hosts",
               static_cast<double>(
                   std::min(in.servers_per_host, in.server_hosts)),
               ">= 0 (both 0: K servers, each on a host of its own)");
  }
  if (!(in.intra_bandwidth_Bps >= 0) || std::isinf(in.intra_bandwidth_Bps)) {
    return Bad("intra_bandwidth (B_intra)", in.intra_bandwidth_Bps,
               ">= 0 and finite (0: B)");
  }
  if (std::isnan(in.intra_latency_s) || std::isinf(in.intra_latency_s)) {
    return Bad("intra_latency (alpha_intra)", in.intra_latency_s,
               "finite (< 0: alpha)");
  }
  if (!(in.overlap >= 0 && in.overlap <= 1)) {
    return Bad("overlap (o)", in.overlap, "in [0, 1]");
  }
  for (const auto& [key, field, optional] : CpuCostFields()) {
    const double value = in.cpu.*field;
    if (!(value >= 0) || std::isinf(value)) {
      return Bad(absl::StrCat("cpu.", key), value, ">= 0 and finite");
    }
  }
  for (size_t i = 0; i < in.gradient_ready.size(); ++i) {
    const GradientReady& g = in.gradient_ready[i];
    if (!(g.bytes >= 0) || std::isinf(g.bytes)) {
      return Bad(absl::StrCat("gradient_ready[", i, "].bytes"), g.bytes,
                 ">= 0 and finite");
    }
    if (!(g.ready_s >= 0) || std::isinf(g.ready_s)) {
      return Bad(absl::StrCat("gradient_ready[", i, "].ready_s"), g.ready_s,
                 ">= 0 and finite");
    }
    if (i > 0 && g.ready_s < in.gradient_ready[i - 1].ready_s) {
      return Bad(absl::StrCat("gradient_ready[", i, "].ready_s"), g.ready_s,
                 "no earlier than the one before (the gradients in the "
                 "order they become ready)");
    }
  }
  if (in.cpu.cores < 0) {
    return Bad("cpu.cores (C)", in.cpu.cores, ">= 0 (0: every server)");
  }
  if (!(in.optimizer_state_per_param >= 0) ||
      std::isinf(in.optimizer_state_per_param)) {
    return Bad("optimizer_state_per_param (s)", in.optimizer_state_per_param,
               ">= 0 and finite");
  }
  return absl::OkStatus();
}

Updates UpdatesOf(absl::string_view strategy, int64_t staleness) {
  const StrategyFormula* formula = FormulaRegistry::Find(strategy);
  return formula == nullptr ? Updates::kExact : formula->UpdatesAt(staleness);
}

std::string UpdatesLabel(absl::string_view strategy, int64_t staleness) {
  switch (UpdatesOf(strategy, staleness)) {
    case Updates::kLossy: {
      const StrategyFormula* formula = FormulaRegistry::Find(strategy);
      const std::string note = formula ? formula->LossyNote() : "";
      return note.empty() ? "lossy" : absl::StrCat("lossy (", note, ")");
    }
    case Updates::kStale:
      return absl::StrCat("stale (τ=", staleness, ")");
    case Updates::kLocal:
      return "local (parameters averaged every H steps)";
    case Updates::kExact:
      break;
  }
  return "exact";
}

std::string MemoryFormula(absl::string_view strategy) {
  const StrategyFormula* formula = FormulaRegistry::Find(strategy);
  return formula == nullptr ? "" : formula->MemoryFormula();
}

absl::StatusOr<MemoryPerRank> PredictMemory(absl::string_view strategy,
                                            double param_bytes,
                                            double optimizer_state_per_param,
                                            int64_t workers, int64_t servers) {
  const StrategyFormula* formula = FormulaRegistry::Find(strategy);
  if (formula == nullptr) {
    return UnknownStrategy("no memory formula for", strategy);
  }
  if (!(param_bytes > 0) || std::isinf(param_bytes)) {
    return Bad("param bytes (P)", param_bytes, "> 0 and finite");
  }
  if (!(optimizer_state_per_param >= 0) ||
      std::isinf(optimizer_state_per_param)) {
    return Bad("optimizer_state_per_param (s)", optimizer_state_per_param,
               ">= 0 and finite");
  }
  if (workers < 1) return Bad("workers (n)", workers, ">= 1");
  if (servers < 1) return Bad("servers (K)", servers, ">= 1");
  return formula->Memory(param_bytes, optimizer_state_per_param, workers,
                         servers);
}

std::vector<GradientReady> ProportionalReadySchedule(
    const std::vector<double>& bytes, double compute_s,
    double forward_fraction) {
  double total = 0;
  for (double b : bytes) total += b;
  std::vector<GradientReady> out;
  const double forward = forward_fraction * compute_s;
  double produced = 0;
  for (double b : bytes) {
    produced += b;
    out.push_back({b, forward + (compute_s - forward) *
                                    (total > 0 ? produced / total : 1.0)});
  }
  return out;
}

std::vector<std::string> CostModelStrategies() {
  return FormulaRegistry::Names();
}

absl::StatusOr<Prediction> PredictStep(absl::string_view strategy,
                                       const CostInputs& in) {
  if (absl::Status s = ValidateCostInputs(in); !s.ok()) return s;
  const StrategyFormula* formula = FormulaRegistry::Find(strategy);
  if (formula == nullptr) return UnknownStrategy("unknown strategy", strategy);
  Prediction p;
  p.strategy = std::string(strategy);
  p.workers = in.workers;
  p.compute_s = in.compute_s;
  formula->Terms(in, p);
  absl::StatusOr<MemoryPerRank> memory =
      PredictMemory(strategy, in.model_bytes, in.optimizer_state_per_param,
                    p.workers, in.servers);
  if (!memory.ok()) return memory.status();
  p.worker_memory_bytes = memory->worker_bytes;
  p.server_memory_bytes = memory->server_bytes;
  // On a wire of its own the per-byte CPU work runs while the bytes are in
  // flight, chunk by chunk: the link's seconds beyond it are what it adds.
  p.wire_s = in.cpu_streams_with_link
                 ? std::max(0.0, p.bandwidth_s - p.streamed_cpu_s)
                 : p.bandwidth_s;
  p.comm_s = p.wire_s + p.latency_s + p.overhead_s + p.cpu_s;
  // The CPU terms share the cores with the compute, so they are not
  // hidden, except a background thread's on cores the compute leaves
  // (the formula fills hidden_cpu_s, step_compute_s and its own cores'
  // bound then).
  p.step_compute_s = in.compute_s;
  const bool background = formula->RunsInBackground(in, p);
  const double overlap = background ? 1.0 : in.overlap;
  const double unhidden = p.cpu_s - p.hidden_cpu_s;
  const bool scheduled = !background && !in.gradient_ready.empty() &&
                         SimulateBackwardOverlap(*formula, in, p);
  if (!scheduled) {
    // Without a schedule, o; with one, a strategy that communicates only
    // after backward hides nothing.
    const double o = background || in.gradient_ready.empty() ? overlap : 0.0;
    p.exposed_comm_s =
        std::max(0.0, p.comm_s - unhidden - o * p.step_compute_s) + unhidden;
    p.communicates_during_compute = (o > 0 && p.comm_s > 0) ||
                                    formula->CommunicatesDuringCompute(in);
  } else {
    p.communicates_during_compute = true;  // its calls start in backward
  }
  // What nominal α-β terms miss (cost_model.h): compute slowed by the
  // communication it hides, and the framework's fixed cost a step.
  if (p.workers > 1 && p.comm_s > 0) {
    const double hidden = scheduled
                              ? p.backward_hidden_s
                              : std::max(0.0, p.comm_s - p.exposed_comm_s);
    p.contention_s = in.compute_slowdown * std::min(hidden, in.compute_s);
    p.sync_fixed_s = in.sync_fixed_s;
    p.exposed_comm_s += p.contention_s + p.sync_fixed_s;
  }
  // No step is shorter than the CPU work of all its processes over the
  // cores: on saturated cores a background round runs as fast as the
  // cores let it, not as fast as its quiet calibration.
  p.exposed_comm_s = std::max(
      p.exposed_comm_s, p.core_bound_s - p.step_compute_s);
  p.step_s = p.step_compute_s + p.exposed_comm_s;
  // The cores' demand; every strategy but a background one (which has its
  // own bound above) takes no less than it over the cores.
  if (in.cpu.cores > 0) {
    p.cpu_demand_s = CpuDemandSeconds(*formula, in, p);
    if (!background) {
      p.core_bound_s = p.cpu_demand_s / static_cast<double>(in.cpu.cores);
      if (p.core_bound_s > p.step_s) {
        p.exposed_comm_s += p.core_bound_s - p.step_s;
        p.step_s = p.core_bound_s;
      }
    }
    p.core_share = p.cpu_demand_s / (in.cpu.cores * p.step_s);
  }
  p.utilization = in.compute_s / p.step_s;
  p.speedup = static_cast<double>(p.workers) * in.compute_s / p.step_s;
  p.scaling_efficiency = p.speedup / static_cast<double>(p.workers);
  return p;
}

absl::StatusOr<Prediction> PredictMeasuredWindow(absl::string_view strategy,
                                                 const CostInputs& in,
                                                 int64_t first_step,
                                                 int64_t steps,
                                                 PlainStepsInWindow* plain) {
  if (steps < 1) return Bad("window steps", static_cast<double>(steps), ">= 1");
  if (first_step < 0) {
    return Bad("window first step", static_cast<double>(first_step), ">= 0");
  }
  absl::StatusOr<Prediction> own = PredictStep(strategy, in);
  if (!own.ok()) return own;
  if (plain != nullptr) *plain = PlainStepsInWindow{};
  const StrategyFormula* formula = FormulaRegistry::Find(strategy);
  const std::optional<StrategyFormula::PlainFirstSteps> first =
      formula->plain_first_steps();
  if (!first) return own;
  const int64_t count =
      static_cast<int64_t>(OptionNumber(in, first->option, 0));
  const int64_t in_window =
      std::clamp<int64_t>(count - first_step, 0, steps);
  if (in_window == 0) return own;
  CostInputs plain_in = in;
  for (const auto& [flag, value] : first->formula_options) {
    plain_in.strategy_options[flag] = value;
  }
  absl::StatusOr<Prediction> plain_step = PredictStep(first->formula, plain_in);
  if (!plain_step.ok()) return plain_step;
  Prediction p = *std::move(own);
  const double own_step_s = p.step_s;
  p.step_s = (static_cast<double>(in_window) * plain_step->step_s +
              static_cast<double>(steps - in_window) * own_step_s) /
             static_cast<double>(steps);
  p.exposed_comm_s = p.step_s - p.step_compute_s;
  p.utilization = in.compute_s / p.step_s;
  p.speedup = static_cast<double>(p.workers) * in.compute_s / p.step_s;
  p.scaling_efficiency = p.speedup / static_cast<double>(p.workers);
  if (plain != nullptr) {
    *plain = PlainStepsInWindow{in_window, first->option, first->formula,
                                plain_step->step_s, own_step_s};
  }
  return p;
}

absl::StatusOr<std::vector<Prediction>> PredictSweep(
    const std::vector<std::string>& strategies, const CostInputs& in,
    int64_t max_workers) {
  if (max_workers < 1) {
    return Bad("max_workers", static_cast<double>(max_workers), ">= 1");
  }
  std::vector<int64_t> counts;
  for (int64_t n = 1; n < max_workers; n *= 2) counts.push_back(n);
  counts.push_back(max_workers);
  std::vector<Prediction> out;
  for (const std::string& strategy : strategies) {
    for (int64_t n : counts) {
      CostInputs at = in;
      at.workers = n;
      absl::StatusOr<Prediction> p = PredictStep(strategy, at);
      if (!p.ok()) return p.status();
      out.push_back(*std::move(p));
      // A one-worker strategy (baseline) is predicted once.
      if (FormulaRegistry::Find(strategy)->OneWorkerOnly()) break;
    }
  }
  return out;
}

absl::StatusOr<double> PredictionError(double predicted, double measured) {
  if (!(measured > 0) || std::isinf(measured)) {
    return Bad("measured value", measured, "> 0 and finite");
  }
  if (!(predicted >= 0) || std::isinf(predicted)) {
    return Bad("predicted value", predicted, ">= 0 and finite");
  }
  return (predicted - measured) / measured;
}

std::string PredictionsMarkdown(const std::vector<Prediction>& predictions) {
  // Pivot: rows n (ascending, first-seen order), one column per strategy.
  std::vector<std::string> strategies;
  std::vector<int64_t> counts;
  for (const Prediction& p : predictions) {
    if (std::find(strategies.begin(), strategies.end(), p.strategy) ==
        strategies.end()) {
      strategies.push_back(p.strategy);
    }
    if (std::find(counts.begin(), counts.end(), p.workers) == counts.end()) {
      counts.push_back(p.workers);
    }
  }
  std::sort(counts.begin(), counts.end());
  auto find = [&](const std::string& s, int64_t n) -> const Prediction* {
    for (const Prediction& p : predictions) {
      if (p.strategy == s && p.workers == n) return &p;
    }
    return nullptr;
  };
  std::string md = "Speedup (scaling efficiency) by workers n:\n\n|     n |";
  for (const std::string& s : strategies)
    absl::StrAppendFormat(&md, " %16s |", s);
  md += "\n|------:|";
  for (size_t i = 0; i < strategies.size(); ++i) md += "-----------------:|";
  md += "\n";
  for (int64_t n : counts) {
    absl::StrAppendFormat(&md, "| %5d |", n);
    for (const std::string& s : strategies) {
      const Prediction* p = find(s, n);
      const std::string cell = p == nullptr
                                   ? ""
                                   : absl::StrFormat("%.2f (%.2f)", p->speedup,
                                                     p->scaling_efficiency);
      absl::StrAppendFormat(&md, " %16s |", cell);
    }
    md += "\n";
  }
  md +=
      "\n| Strategy |     n | Step (ms) | Comm (ms) | Exposed (ms) | "
      "Utilization |  Speedup | Scaling eff. | Mem/worker (MB) | "
      "Mem/server (MB) |\n"
      "|----------|------:|----------:|----------:|-------------:|"
      "------------:|---------:|-------------:|----------------:|"
      "----------------:|\n";
  for (const Prediction& p : predictions) {
    const std::string server =
        p.servers > 0 ? absl::StrFormat("%.1f", p.server_memory_bytes / 1e6)
                      : "-";
    absl::StrAppendFormat(
        &md,
        "| %-8s | %5d | %9.3f | %9.3f | %12.3f | %10.1f%% | %8.2f | %12.3f "
        "| %15.1f | %15s |\n",
        p.strategy, p.workers, 1e3 * p.step_s, 1e3 * p.comm_s,
        1e3 * p.exposed_comm_s, 100 * p.utilization, p.speedup,
        p.scaling_efficiency, p.worker_memory_bytes / 1e6, server);
  }
  md +=
      "\nMemory per rank: P = M the parameters' bytes, s the optimizer's "
      "state per parameter (ZeRO's accounting, no activations): ";
  std::vector<std::string> formulas;
  for (const std::string& s : strategies) {
    if (const std::string f = MemoryFormula(s); !f.empty()) {
      formulas.push_back(absl::StrCat(s, " ", f));
    }
  }
  absl::StrAppend(&md, absl::StrJoin(formulas, "; "), ".\n");
  return md;
}

nlohmann::json PredictionJson(const Prediction& p) {
  return {{"strategy", p.strategy},
          {"workers", p.workers},
          {"servers", p.servers},
          {"compute_s", p.compute_s},
          {"step_compute_s", p.step_compute_s},
          {"bandwidth_s", p.bandwidth_s},
          {"latency_s", p.latency_s},
          {"overhead_s", p.overhead_s},
          {"cpu_s", p.cpu_s},
          {"streamed_cpu_s", p.streamed_cpu_s},
          {"wire_s", p.wire_s},
          {"comm_s", p.comm_s},
          {"exposed_comm_s", p.exposed_comm_s},
          {"core_bound_s", p.core_bound_s},
          {"backward_hidden_s", p.backward_hidden_s},
          {"contention_s", p.contention_s},
          {"sync_fixed_s", p.sync_fixed_s},
          {"communicates_during_compute",
           p.communicates_during_compute},
          {"cpu_demand_s", p.cpu_demand_s},
          {"core_share", p.core_share},
          {"step_s", p.step_s},
          {"utilization", p.utilization},
          {"speedup", p.speedup},
          {"scaling_efficiency", p.scaling_efficiency},
          {"worker_memory_bytes", p.worker_memory_bytes},
          {"server_memory_bytes", p.server_memory_bytes}};
}

nlohmann::json PredictionsJson(const CostInputs& in,
                               const std::vector<Prediction>& predictions) {
  nlohmann::json rows = nlohmann::json::array();
  for (const Prediction& p : predictions) {
    rows.push_back(PredictionJson(p));
  }
  return {{"inputs",
           {{"compute_s", in.compute_s},
            {"model_bytes", in.model_bytes},
            {"num_tensors", in.num_tensors},
            {"servers", in.servers},
            {"bandwidth_Bps", in.bandwidth_Bps},
            {"latency_s", in.latency_s},
            {"fusion_threshold_bytes", in.fusion_threshold_bytes},
            {"cycle_s", in.cycle_s},
            {"overlap", in.overlap},
            {"ps_push_pull_overlap", in.ps_push_pull_overlap},
            {"cpu_streams_with_link", in.cpu_streams_with_link},
            {"compute_emulated", in.compute_emulated},
            {"bucket_bytes", in.bucket_bytes},
            {"first_bucket_bytes", in.first_bucket_bytes},
            {"ranks_per_host", in.ranks_per_host},
            {"servers_per_host", in.servers_per_host},
            {"server_hosts", in.server_hosts},
            {"compute_slowdown", in.compute_slowdown},
            {"sync_fixed_s", in.sync_fixed_s},
            {"workers_per_link", in.workers_per_link},
            {"intra_bandwidth_Bps", in.intra_bandwidth_Bps},
            {"intra_latency_s", in.intra_latency_s},
            {"optimizer_state_per_param", in.optimizer_state_per_param}}},
          {"predictions", rows}};
}

}  // namespace ringside

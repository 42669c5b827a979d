#include "experiments/comparison/cost_model_link.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "collectives/fusion/fusion_options.h"
#include "experiments/comparison/worker_args.h"
#include "experiments/cost/formulas/formula_registry.h"
#include "experiments/cost/link_estimate.h"
#include "worker/emulation_scale.h"

namespace ringside::compare {

absl::StatusOr<CostModelLink> MakeCostModelLink(
    const NetworkShape& network, const std::vector<std::string>& worker_args,
    const CostModelOptions& options) {
  LinkHints hints;
  hints.given_gbit = options.bandwidth_gbit;
  hints.given_latency_us = options.latency_us;
  hints.shaped = network;
  absl::StatusOr<LinkEstimate> estimate =
      EstimateLink(hints, absl::Seconds(30));
  if (!estimate.ok()) return estimate.status();
  CostInputs in;
  in.bandwidth_Bps = estimate->bandwidth_Bps;
  in.latency_s = estimate->latency_s;
  in.link_cpu_byte_s = estimate->cpu_byte_s;
  in.wire_cpu_byte_s = estimate->total_cpu_byte_s;
  in.overlap = options.overlap;
  // Unshaped loopback: the cores move the link's bytes (its measured 1/B),
  // so the CPU terms add to it; a shaped link or a given one is a wire of
  // its own.
  in.cpu_streams_with_link = hints.given_gbit > 0 || hints.shaped.enabled();
  const FusionOptions fusion;
  in.fusion_threshold_bytes =
      static_cast<double>(fusion.fusion_threshold_bytes);
  in.cycle_s = absl::ToDoubleSeconds(fusion.cycle_time);
  if (std::optional<std::string> v =
          WorkerFlag(worker_args, "fusion_threshold_bytes");
      v && !absl::SimpleAtod(*v, &in.fusion_threshold_bytes)) {
    return absl::InvalidArgumentError("bad --fusion_threshold_bytes=" + *v);
  }
  // ring's buckets, as the workers will bucket (--ring_bucket_kb,
  // --ring_first_bucket_kb; else the defaults, 25 MiB and 1 MiB), and the
  // parameter servers' chunk (--chunk_kb; else AutoChunkBytes).
  for (const auto& [flag, field] :
       {std::pair<const char*, double*>{"ring_bucket_kb", &in.bucket_bytes},
        {"ring_first_bucket_kb", &in.first_bucket_bytes},
        {"chunk_kb", &in.ps_chunk_bytes}}) {
    if (std::optional<std::string> v = WorkerFlag(worker_args, flag)) {
      double kb = 0;
      if (!absl::SimpleAtod(*v, &kb)) {
        return absl::InvalidArgumentError(
            absl::StrCat("bad --", flag, "=", *v));
      }
      *field = kb * 1024;
    }
  }
  // An emulated run at scale S: the workers divide these thresholds by S
  // before using them (worker/emulation_scale.h), and so does the model.
  // (Each run's record carries its own buckets and chunk, which
  // PredictRuns prefers.)
  if (const double s = network.emulation_scale; s > 1) {
    in.fusion_threshold_bytes = static_cast<double>(ScaledByteThreshold(
        static_cast<int64_t>(in.fusion_threshold_bytes), s, 1));
    for (double* kb_field :
         {&in.bucket_bytes, &in.first_bucket_bytes, &in.ps_chunk_bytes}) {
      *kb_field = 1024.0 * static_cast<double>(ScaledByteThreshold(
                               std::llround(*kb_field / 1024), s, 1024));
    }
  }
  // Every formula's own options the workers are given.
  for (const std::string& flag : FormulaRegistry::OptionFlags()) {
    if (std::optional<std::string> v = WorkerFlag(worker_args, flag.c_str())) {
      in.strategy_options[flag] = *v;
    }
  }
  if (std::optional<std::string> v = WorkerFlag(worker_args, "cycle_time_ms")) {
    double ms = 0;
    if (!absl::SimpleAtod(*v, &ms)) {
      return absl::InvalidArgumentError("bad --cycle_time_ms=" + *v);
    }
    in.cycle_s = ms / 1e3;
  }
  // Placeholders for ValidateCostInputs; PredictRuns sets them per run.
  in.compute_s = 1;
  in.model_bytes = 1;
  if (absl::Status s = ValidateCostInputs(in); !s.ok()) return s;
  return CostModelLink{in, estimate->source};
}

CostInputs PredictionInputs(const CostModelLink& link,
                            const std::optional<Calibration>& calibration) {
  CostInputs in = link.inputs;
  if (calibration) in.cpu = calibration->cpu;
  return in;
}

std::string CalibrationNote(const SweepCalibration& calibration) {
  return calibration.costs
             ? CalibrationLine(*calibration.costs)
             : absl::StrCat("Calibration: none (", calibration.why_none,
                            "): the predictions have no CPU terms.");
}

SweepCalibration CalibrateAfterBaseline(const CalibrationRequest& request,
                                        const ReportRow& row) {
  SweepCalibration out;
  if (!request.enabled) {
    out.why_none = "--nocalibrate";
    return out;
  }
  if (row.model_bytes <= 0 || row.num_tensors <= 0) {
    out.why_none = "the baseline's record lacks the model's size";
    return out;
  }
  if (row.device != "cpu") {
    out.why_none = absl::StrCat(
        "the workers ran on ", row.device,
        ", and the calibration times the CPU paths (Gloo, gRPC) only");
    return out;
  }
  if (request.earlier) {
    out.costs = request.earlier;
    return out;
  }
  CalibrationOptions options;
  options.model_bytes = row.model_bytes;
  options.num_tensors = row.num_tensors;
  options.tensor_shapes = row.tensor_shapes;
  // PowerSGD's products at the rank the study runs it at.
  if (const std::optional<std::string> rank =
          FormulaRegistry::StudyFlag("ring_powersgd", "powersgd_rank")) {
    int64_t r = 0;
    if (absl::SimpleAtoi(*rank, &r) && r >= 1) options.lowrank_rank = r;
  }
  options.cores = request.cores;
  options.servers = std::max(1, request.servers);
  // The calls start as a step's first collective does: behind the compute
  // (the baseline's, per step); emulated compute sleeps, so idle cores.
  if (row.emulated) {
    options.busy_before_call_s = 0;
  } else if (row.compute_step_s > 0) {
    options.busy_before_call_s = std::min(row.compute_step_s, 1.0);
  }
  std::fprintf(stderr, "compare: calibrating the cost model (%.1f MB)\n",
               row.model_bytes / 1e6);
  absl::StatusOr<Calibration> c = Calibrate(options);
  if (c.ok()) {
    out.costs = *c;
    std::fprintf(stderr, "compare: %s\n", CalibrationLine(*c).c_str());
  } else {
    out.why_none = absl::StrCat("it failed: ", c.status().ToString());
    std::fprintf(stderr, "compare: calibration failed: %s\n",
                 c.status().ToString().c_str());
  }
  return out;
}

}  // namespace ringside::compare

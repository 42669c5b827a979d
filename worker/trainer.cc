#include "worker/trainer.h"

#include <algorithm>
#include <optional>
#include <string>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "collectives/gloo_loop_pacing.h"
#include "common/denormals.h"
#include "common/process_memory.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "worker/batch_prefetcher.h"
#include "worker/gradient_ready_times.h"
#include "worker/host_backend.h"
#include "worker/run_metrics.h"

namespace ringside {
namespace {

// When the phases of one training step happened (steady-clock seconds).
struct StepTimes {
  double start = 0;          // before the batch was read
  double compute_start = 0;  // ForwardBackward called
  double backward_end = 0;   // ForwardBackward returned
  double finish_end = 0;     // FinishStep returned
};

// The end of one step: the step's FORWARD_BACKWARD and FINISH_STEP spans
// on the job's timeline (may be null); then FinishStep's error annotated
// with the strategy and step, or the step record (compute =
// `model_compute_s` less the strategy's hook waits + its local optimizer
// time; its CPU time from `model_cpu_s`, −1: unknown) into `metrics`
// and job.on_record (may be empty).
absl::Status RecordStep(const TrainJob& job, int64_t step, double loss,
                        const StepTimes& times, double model_compute_s,
                        double model_cpu_s,
                        const absl::StatusOr<StepStats>& stats,
                        RunMetrics& metrics) {
  RecordSpan(job.sync.timeline, "step", "FORWARD_BACKWARD", times.compute_start,
             times.backward_end, {{"step", step}, {"loss", loss}});
  RecordSpan(job.sync.timeline, "step", "FINISH_STEP", times.backward_end,
             times.finish_end, {{"step", step}});
  if (!stats.ok()) {
    return Annotate(stats.status(),
                    absl::StrCat(job.strategy->name(), " step ", step));
  }
  StepRecord record;
  record.step = step;
  record.loss = loss;
  record.step_s = times.finish_end - times.start;
  // Time the model spent blocked in the strategy's parameter-use hooks
  // (zero3's gathers) is communication, not compute.
  record.compute_s = std::max(0.0, model_compute_s - stats->hook_wait_s) +
                     stats->local_optimizer_s;
  record.sync_s = record.step_s - record.compute_s;
  // The compute's CPU time, where the backend could tell it and no hook
  // blocked inside it (a wait's CPU time is not its wall time).
  record.compute_cpu_s = model_cpu_s >= 0 && stats->hook_wait_s == 0
                             ? model_cpu_s + stats->local_optimizer_s
                             : -1;
  record.bytes_sent = stats->bytes_sent;
  record.bytes_received = stats->bytes_received;
  record.ring_critical_bytes = stats->ring_critical_bytes;
  metrics.Add(record, times.start);
  if (job.on_record) job.on_record(record.ToJson());
  return absl::OkStatus();
}

// The final record: the job, the measures, the model's own name, then the
// backend's fields.
nlohmann::json FinalRecord(const TrainJob& job, const std::string& model_name,
                           int64_t model_bytes, int64_t start_step,
                           double eval_loss, int64_t stash_bytes,
                           const RunMetrics& metrics,
                           const nlohmann::json& backend_fields) {
  nlohmann::json record = {
      {"event", "final"},
      {"rank", job.rank.rank},
      {"world_size", job.rank.world_size},
      {"strategy", job.strategy->name()},
      {"model", model_name},
      {"batch_size", job.options.batch_size},
      {"accumulate_steps", job.options.accumulate_steps},
      {"lr", job.optimizer.lr},
      {"lr_warmup_steps", job.optimizer.lr_warmup_steps},
      {"steps", job.options.steps},
      {"start_step", start_step},
      {"warmup_steps", job.options.warmup_steps},
      {"measured_steps", metrics.measured_steps()},
      {"eval_loss", eval_loss},
      {"utilization", metrics.utilization()},
      {"throughput", metrics.throughput()},
      {"compute_s", metrics.compute_s()},
      {"wall_s", metrics.wall_s()},
      {"bytes_sent", metrics.bytes_sent()},
      {"bytes_received", metrics.bytes_received()},
  };
  // The compute's CPU time over the measured steps, where every step's
  // was known (RunMetrics::compute_cpu_s).
  if (metrics.compute_cpu_s() >= 0) {
    record["compute_cpu_s"] = metrics.compute_cpu_s();
  }
  // How its float math treated denormals (common/denormals.h): flushed to
  // zero unless RINGSIDE_DENORMALS=keep.
  record["denormals"] = DenormalsFlushedToZero() ? "flushed_to_zero" : "kept";
  // Sharded strategies: their rings' critical bytes over the measured steps.
  if (metrics.ring_critical_bytes() > 0) {
    record["ring_critical_bytes"] = metrics.ring_critical_bytes();
  }
  // What this worker holds: the model's parameters and gradients (one flat
  // buffer each, or the most of them a sharding strategy held at once), the
  // optimizer state its strategy keeps, and the peak RSS.
  const int64_t peak_params = job.strategy->PeakParamBytes();
  const int64_t peak_grads = job.strategy->PeakGradBytes();
  record["param_bytes"] = peak_params >= 0 ? peak_params : model_bytes;
  // Gradient accumulation's stash is gradient memory too.
  record["grad_bytes"] =
      (peak_grads >= 0 ? peak_grads : model_bytes) + stash_bytes;
  record["optimizer_state_bytes"] = job.strategy->OptimizerStateBytes();
  // The whole optimizer state per parameter (s of the memory formulas,
  // experiments/cost/cost_model.h), wherever the strategy keeps it.
  record["optimizer_state_per_param"] = job.optimizer.StateFloatsPerParameter();
  record["peak_rss_bytes"] = PeakRssBytes();
  // Gloo's event loops, where the worker has some
  // (collectives/gloo_loop_pacing.h): their epoll_wait calls, those the
  // spin brake delayed, and their time on a core and runnable but waiting
  // for one, which says whether the loop starved.
  if (const GlooLoopStats loop = ReadGlooLoopStats(); loop.threads > 0) {
    record["gloo_loop"] = {
        {"policy", GlooEventLoopName(job.sync.gloo_event_loop)},
        {"threads", loop.threads},
        {"epoll_calls", loop.calls},
        {"paced_calls", loop.pauses},
        {"cpu_s", loop.cpu_s},
        {"wait_s", loop.wait_s}};
  }
  if (const std::string variant = job.strategy->Variant(); !variant.empty()) {
    record["variant"] = variant;
  }
  // The strategy's own settings that its cost formula reads.
  record.update(job.strategy->RecordFields());
  record.update(backend_fields);
  return record;
}

// The stragglers' factors this rank applied, for the final record.
class StragglerTally {
 public:
  void Add(double factor, bool scaled) {
    sum_ += factor;
    ++steps_;
    scaled_ = scaled_ || scaled;
    waited_ = waited_ || (!scaled && factor > 1.0);
  }
  double MeanFactor() const { return steps_ > 0 ? sum_ / steps_ : 1.0; }
  std::string Mode() const {
    if (scaled_) return "emulated compute scaled";
    return waited_ ? "real compute stretched by waiting"
                   : "no factor above 1 on this rank";
  }

 private:
  double sum_ = 0;
  int64_t steps_ = 0;
  bool scaled_ = false;
  bool waited_ = false;
};

// Whether the loop evaluates after `step` (TrainerOptions::eval_every).
bool EvaluatesAfter(const TrainerOptions& options, int64_t step) {
  return options.eval_every > 0 &&
         ((step + 1) % options.eval_every == 0 || step == options.steps - 1);
}

// A mid-run evaluation of the current parameters, the strategy making them
// whole first (SyncStrategy::PrepareEvaluation).
absl::StatusOr<double> EvaluateMidRun(ComputeBackend& backend,
                                      SyncStrategy& strategy, const Batch& eval,
                                      int64_t step) {
  const std::string where = absl::StrCat("evaluation after step ", step);
  RS_RETURN_IF_ERROR(Annotate(strategy.PrepareEvaluation(), where));
  absl::StatusOr<double> loss = backend.Evaluate(eval);
  RS_RETURN_IF_ERROR(Annotate(strategy.EndEvaluation(), where));
  if (!loss.ok()) return Annotate(loss.status(), where);
  return loss;
}

}  // namespace

absl::Status TrainerOptions::Validate() const {
  if (batch_size <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch_size must be > 0, got ", batch_size));
  }
  if (steps <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("steps must be > 0, got ", steps));
  }
  if (eval_every < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("eval_every must be >= 0, got ", eval_every));
  }
  if (accumulate_steps < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("accumulate_steps must be >= 1, got ", accumulate_steps));
  }
  if (warmup_steps < 0 || warmup_steps >= steps) {
    return absl::InvalidArgumentError(absl::StrCat(
        "warmup_steps must be in [0, steps=", steps, "), got ", warmup_steps));
  }
  return absl::OkStatus();
}

absl::Status TrainJob::Validate() const {
  if (dataset == nullptr) {
    return absl::InvalidArgumentError("TrainJob: no dataset");
  }
  if (strategy == nullptr) {
    return absl::InvalidArgumentError("TrainJob: no strategy");
  }
  RS_RETURN_IF_ERROR(options.Validate());
  return optimizer.Validate();
}

absl::StatusOr<TrainResult> RunTraining(ComputeBackend& backend,
                                        const TrainJob& job) {
  RS_RETURN_IF_ERROR(job.Validate());
  Dataset& dataset = *job.dataset;
  const std::string name = job.strategy->name();

  SyncContext context;
  context.rank = job.rank.rank;
  context.world_size = job.rank.world_size;
  context.optimizer = job.optimizer;
  context.options = job.sync;
  // A strategy that keeps the parameters sharded needs the model to say
  // when it reads them; refused here, before any peer is contacted, and
  // before Init, which may lay the buffers out for it.
  const ParamUseHooks* param_use = job.strategy->ParamUse();
  RS_RETURN_IF_ERROR(Annotate(backend.InstallParamUse(param_use),
                              absl::StrCat(name, " needs parameter use")));
  absl::Cleanup uninstall = [&] {
    backend.InstallParamUse(nullptr).IgnoreError();
  };
  RS_RETURN_IF_ERROR(backend.Init(job.options.init_seed, context));
  // Its hooks gather into the buffers the model reads: never host staging.
  if (param_use != nullptr && !job.strategy->SupportsDevice(context.device)) {
    return absl::FailedPreconditionError(
        absl::StrCat(name,
                     " keeps the parameters sharded and does not run on this "
                     "backend's buffers"));
  }
  SyncStrategy& strategy = backend.Adapt(*job.strategy);
  RS_RETURN_IF_ERROR(
      Annotate(strategy.Init(context), absl::StrCat(name, " init")));
  // On every early return the strategy aborts (its threads joined) before
  // the backend's buffers, which its communication thread may still be
  // reducing into or gathering into, are freed.
  bool shut_down = false;
  absl::Cleanup stop_strategy = [&] {
    if (!shut_down) strategy.Abort().IgnoreError();
  };

  const int64_t b = job.options.batch_size;
  const int64_t k = job.options.accumulate_steps;
  const int64_t pass_batch = b * job.rank.world_size;  // N*b, one pass
  RunMetrics metrics(pass_batch * k, job.options.warmup_steps);
  // When each gradient became ready (host clocks only: on a device a
  // report means queued kernels), for the cost model's overlap.
  GradientReadyTimes ready_times(context.layout);
  const bool time_readiness = context.device == Device::kCpu;
  const GradientReadyFn on_ready = [&](int i) {
    if (time_readiness) ready_times.Mark(i, NowSeconds());
    strategy.OnGradientReady(i);
  };
  // The last of k > 1 passes: each gradient folded before the strategy
  // sees it (the first error kept, the strategy left out after it).
  absl::Status fold_error;
  const GradientReadyFn fold_then_ready = [&](int i) {
    if (!fold_error.ok()) return;
    fold_error = backend.FoldStashedGradient(i, static_cast<int>(k));
    if (!fold_error.ok()) return;
    if (time_readiness) ready_times.Mark(i, NowSeconds());
    strategy.OnGradientReady(i);
  };
  const GradientReadyFn no_sync;  // passes before the last: no strategy
  Batch eval;  // the held-out set: mid-run and final evaluations
  RS_RETURN_IF_ERROR(dataset.EvalBatch(&eval));
  // Pass p of step s reads examples [(s*k + p)*N*b + rank*b, ... + b).
  auto pass_range = [&](int64_t step, int64_t pass) {
    return BatchPrefetcher::Range{
        (step * k + pass) * pass_batch + job.rank.rank * b, b};
  };
  Batch in_line_batch;  // without the prefetcher
  // Declared after eval and the strategy's cleanup: destroyed (its thread
  // joined) first, on every return.
  std::optional<BatchPrefetcher> prefetcher;
  if (backend.PrefetchesBatches()) {
    prefetcher.emplace(dataset, [&backend](const Batch& batch) {
      return backend.PrepareBatch(batch);
    });
  }
  double train_start = -1;  // the first step's start
  double evaluating_s = 0;  // mid-run evaluations so far
  // Stragglers: each step's factor scales emulated compute, or stretches
  // real compute by waiting.
  ComputeStretch stretch;
  StragglerTally tally;
  // From 0, or from the step of the checkpoint the strategy resumed from.
  for (int64_t step = strategy.start_step(); step < job.options.steps; ++step) {
    backend.BeginStep(step, step >= job.options.warmup_steps);
    StepTimes t;
    t.start = NowSeconds();
    if (train_start < 0) train_start = t.start;
    double loss_sum = 0;
    double compute_s = 0;
    // The passes' CPU time (ComputeBackend::ComputeCpuSeconds); −1 once
    // any pass's is unknown, or when stragglers stretch compute by waiting.
    double compute_cpu_s = job.stragglers.any() ? -1 : 0;
    double factor = 1.0;
    bool scaled = false;
    if (job.stragglers.any()) {
      factor = job.stragglers.Factor(job.rank.rank, step);
      scaled = backend.ScaleEmulatedCompute(factor);
      tally.Add(factor, scaled);
    }
    for (int64_t pass = 0; pass < k; ++pass) {
      const bool last = pass == k - 1;
      const Batch* batch = &in_line_batch;
      if (prefetcher.has_value()) {
        std::optional<BatchPrefetcher::Range> next;
        if (!last || step + 1 < job.options.steps) {
          next = pass_range(last ? step + 1 : step, last ? 0 : pass + 1);
        }
        RS_ASSIGN_OR_RETURN(batch,
                            prefetcher->Get(pass_range(step, pass), next));
      } else {
        const BatchPrefetcher::Range range = pass_range(step, pass);
        RS_RETURN_IF_ERROR(
            dataset.TrainBatch(range.begin, range.count, &in_line_batch));
      }
      const double pass_start = NowSeconds();
      const double pass_cpu_start = ThreadCpuSeconds();
      if (pass == 0) {
        t.compute_start = pass_start;
        ready_times.BeginStep(pass_start, step >= job.options.warmup_steps);
      }
      stretch.BeginPass(scaled ? 1.0 : factor, pass_start);
      RS_ASSIGN_OR_RETURN(
          double loss, backend.ForwardBackward(
                           *batch, stretch.Wrap(!last ? no_sync
                                                      : (k > 1 ? fold_then_ready
                                                               : on_ready))));
      double pass_end = NowSeconds();
      compute_s += backend.ComputeSeconds(pass_end - pass_start);
      const double pass_cpu =
          backend.ComputeCpuSeconds(ThreadCpuSeconds() - pass_cpu_start);
      compute_cpu_s =
          compute_cpu_s < 0 || pass_cpu < 0 ? -1 : compute_cpu_s + pass_cpu;
      compute_s += stretch.EndPass(pass_end);  // a straggler's tail
      pass_end = NowSeconds();
      loss_sum += loss;
      if (!last) {
        const double stash_cpu_start = ThreadCpuSeconds();
        RS_RETURN_IF_ERROR(Annotate(backend.StashGradients(pass == 0),
                                    "gradient accumulation"));
        compute_s += NowSeconds() - pass_end;  // the stash is local work
        if (compute_cpu_s >= 0) {
          compute_cpu_s += ThreadCpuSeconds() - stash_cpu_start;
        }
      }
    }
    RS_RETURN_IF_ERROR(Annotate(fold_error, "gradient accumulation"));
    t.backward_end = NowSeconds();
    absl::StatusOr<StepStats> stats = strategy.FinishStep(step);
    t.finish_end = NowSeconds();
    RS_RETURN_IF_ERROR(RecordStep(job, step, loss_sum / static_cast<double>(k),
                                  t, compute_s, compute_cpu_s, stats, metrics));
    if (EvaluatesAfter(job.options, step)) {
      // Background communication finishes on the clock, not in the pause.
      RS_RETURN_IF_ERROR(Annotate(strategy.Quiesce(step),
                                  absl::StrCat("before the evaluation after "
                                               "step ",
                                               step)));
      const double eval_start = NowSeconds();
      RS_ASSIGN_OR_RETURN(double eval_loss,
                          EvaluateMidRun(backend, strategy, eval, step));
      const double eval_end = NowSeconds();
      RecordSpan(job.sync.timeline, "step", "EVALUATE", eval_start, eval_end,
                 {{"step", step}, {"loss", eval_loss}});
      metrics.Pause(eval_end - eval_start);
      if (job.on_record) {
        job.on_record(
            {{"event", "eval"},
             {"rank", job.rank.rank},
             {"step", step},
             {"samples", (step + 1) * pass_batch * k},
             {"train_wall_s", eval_start - train_start - evaluating_s},
             {"loss", eval_loss}});
      }
      evaluating_s += eval_end - eval_start;
    }
  }
  backend.EndSteps();
  shut_down = true;
  RS_RETURN_IF_ERROR(
      Annotate(strategy.Shutdown(), absl::StrCat(name, " shutdown")));

  TrainResult result;
  RS_ASSIGN_OR_RETURN(result.eval_loss, backend.Evaluate(eval));
  RS_ASSIGN_OR_RETURN(result.params, backend.FinalParams());
  result.final_record =
      FinalRecord(job, backend.model_name(), context.layout.total_bytes(),
                  strategy.start_step(), result.eval_loss, backend.StashBytes(),
                  metrics, backend.RecordFields());
  // The model's tensors, for the cost model's formulas that read shapes.
  nlohmann::json shapes = nlohmann::json::array();
  for (int i = 0; i < context.layout.num_tensors(); ++i) {
    shapes.push_back(context.layout.tensor(i).shape);
  }
  result.final_record["tensor_shapes"] = std::move(shapes);
  if (time_readiness) {
    if (nlohmann::json ready = ready_times.Json(); !ready.is_null()) {
      result.final_record["gradient_ready"] = std::move(ready);
    }
  }
  // The input read ahead (CUDA workers): the mean seconds a pass waited
  // for its batch and a batch took to read and stage -- the input keeps up
  // when the wait is near 0.
  if (prefetcher.has_value() && prefetcher->gets() > 0 &&
      prefetcher->reads() > 0) {
    result.final_record["input_wait_s"] =
        prefetcher->wait_seconds() / static_cast<double>(prefetcher->gets());
    result.final_record["input_read_s"] =
        prefetcher->read_seconds() / static_cast<double>(prefetcher->reads());
  }
  if (job.stragglers.any()) {
    result.final_record["stragglers"] = job.stragglers.Describe();
    result.final_record["straggler_mode"] = tally.Mode();
    result.final_record["compute_factor_mean"] = tally.MeanFactor();
    result.final_record["straggler_wait_s"] = stretch.waited_s();
  }
  return result;
}

absl::StatusOr<TrainResult> Train(Model& model, const TrainJob& job) {
  HostBackend backend(model);
  return RunTraining(backend, job);
}

}  // namespace ringside

#include "worker/trainer.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "worker/run_metrics.h"

namespace ringside {

absl::Status TrainerOptions::Validate() const {
  if (batch_size <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch_size must be > 0, got ", batch_size));
  }
  if (steps <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("steps must be > 0, got ", steps));
  }
  if (warmup_steps < 0 || warmup_steps >= steps) {
    return absl::InvalidArgumentError(absl::StrCat(
        "warmup_steps must be in [0, steps=", steps, "), got ", warmup_steps));
  }
  return absl::OkStatus();
}

absl::Status RecordStep(const SyncStrategy& strategy, int64_t step, double loss,
                        const StepTimes& times, double model_compute_s,
                        const absl::StatusOr<StepStats>& stats,
                        Timeline* timeline, RunMetrics& metrics,
                        const RecordFn& on_record) {
  RecordSpan(timeline, "step", "FORWARD_BACKWARD", times.compute_start,
             times.backward_end, {{"step", step}, {"loss", loss}});
  RecordSpan(timeline, "step", "FINISH_STEP", times.backward_end,
             times.finish_end, {{"step", step}});
  if (!stats.ok()) {
    return Annotate(stats.status(),
                    absl::StrCat(strategy.name(), " step ", step));
  }
  StepRecord record;
  record.step = step;
  record.loss = loss;
  record.step_s = times.finish_end - times.start;
  record.compute_s = model_compute_s + stats->local_optimizer_s;
  record.sync_s = record.step_s - record.compute_s;
  record.bytes_sent = stats->bytes_sent;
  record.bytes_received = stats->bytes_received;
  metrics.Add(record, times.start);
  if (on_record) on_record(record.ToJson());
  return absl::OkStatus();
}

absl::StatusOr<TrainResult> Train(Model& model, Dataset& dataset,
                                  SyncStrategy& strategy, const RankInfo& rank,
                                  const OptimizerConfig& optimizer,
                                  const SyncOptions& sync,
                                  const TrainerOptions& options,
                                  const RecordFn& on_record) {
  RS_RETURN_IF_ERROR(options.Validate());
  RS_RETURN_IF_ERROR(optimizer.Validate());
  const TensorLayout& layout = model.layout();
  TrainResult result;
  result.params.assign(layout.total_elements(), 0.0f);
  std::vector<float> grads(layout.total_elements(), 0.0f);
  model.InitParams(options.init_seed, absl::MakeSpan(result.params));

  SyncContext context;
  context.rank = rank.rank;
  context.world_size = rank.world_size;
  context.layout = layout;
  context.params = absl::MakeSpan(result.params);
  context.grads = absl::MakeSpan(grads);
  context.optimizer = optimizer;
  context.options = sync;
  RS_RETURN_IF_ERROR(
      Annotate(strategy.Init(context), absl::StrCat(strategy.name(), " init")));

  const int64_t b = options.batch_size;
  const int64_t global_batch = b * rank.world_size;
  RunMetrics metrics(global_batch, options.warmup_steps);
  const GradientReadyFn on_ready = [&strategy](int i) {
    strategy.OnGradientReady(i);
  };
  Batch batch;
  for (int64_t step = strategy.start_step(); step < options.steps; ++step) {
    StepTimes t;
    t.start = NowSeconds();
    RS_RETURN_IF_ERROR(
        dataset.TrainBatch(step * global_batch + rank.rank * b, b, &batch));
    t.compute_start = NowSeconds();
    RS_ASSIGN_OR_RETURN(double loss,
                        model.ForwardBackward(batch, result.params,
                                              absl::MakeSpan(grads), on_ready));
    t.backward_end = NowSeconds();
    absl::StatusOr<StepStats> stats = strategy.FinishStep(step);
    t.finish_end = NowSeconds();
    RS_RETURN_IF_ERROR(RecordStep(strategy, step, loss, t,
                                  t.backward_end - t.compute_start, stats,
                                  sync.timeline, metrics, on_record));
  }
  RS_RETURN_IF_ERROR(Annotate(strategy.Shutdown(),
                              absl::StrCat(strategy.name(), " shutdown")));

  Batch eval;
  RS_RETURN_IF_ERROR(dataset.EvalBatch(&eval));
  RS_ASSIGN_OR_RETURN(result.eval_loss, model.Evaluate(eval, result.params));
  result.final_record = {
      {"event", "final"},
      {"rank", rank.rank},
      {"world_size", rank.world_size},
      {"strategy", strategy.name()},
      {"model", model.name()},
      {"batch_size", b},
      {"steps", options.steps},
      {"start_step", strategy.start_step()},
      {"warmup_steps", options.warmup_steps},
      {"measured_steps", metrics.measured_steps()},
      {"eval_loss", result.eval_loss},
      {"utilization", metrics.utilization()},
      {"throughput", metrics.throughput()},
      {"compute_s", metrics.compute_s()},
      {"wall_s", metrics.wall_s()},
      {"bytes_sent", metrics.bytes_sent()},
      {"bytes_received", metrics.bytes_received()},
      {"device", "cpu"},
      {"timing", "steady_clock"},
      {"emulated", model.emulated()},
  };
  return result;
}

}  // namespace ringside

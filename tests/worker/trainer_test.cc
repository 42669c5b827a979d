// The one training loop (RunTraining) over a compute backend: the order in
// which it drives the backend, one step record per step, one final record
// with the job's fields, the model's own name and the backend's fields,
// the shutdown on an early return, and TrainJob's checks.
#include "worker/trainer.h"

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "models/model_factory.h"
#include "worker/host_backend.h"

namespace ringside {
namespace {

// Counts what the loop asks of a strategy; FinishStep always succeeds.
class CountingStrategy final : public SyncStrategy {
 public:
  std::string name() const override { return registered_as; }
  absl::Status Init(const SyncContext&) override { return absl::OkStatus(); }
  void OnGradientReady(int) override { ++ready; }
  absl::StatusOr<StepStats> FinishStep(int64_t) override {
    ++steps;
    return StepStats();
  }
  absl::Status Shutdown() override {
    ++shutdowns;
    return absl::OkStatus();
  }
  std::string Variant() const override { return variant; }
  int64_t OptimizerStateBytes() const override { return 123; }
  nlohmann::json RecordFields() const override { return record_fields; }
  int ready = 0;
  int steps = 0;
  int shutdowns = 0;
  std::string variant;
  nlohmann::json record_fields = nlohmann::json::object();
  std::string registered_as = "counting";  // unregistered
};

// CountingStrategy's counts plus parameter-use hooks (as zero3 has): it
// counts the model's calls and reports `hook_wait_s` per step and fixed
// peak parameter and gradient bytes.
class HookingStrategy final : public SyncStrategy {
 public:
  HookingStrategy() {
    hooks_.needed = [this](int) { ++needed; };
    hooks_.forward_done = [this](int) { ++forward_done; };
  }
  std::string name() const override { return "hooking"; }
  absl::Status Init(const SyncContext&) override {
    ++inits;
    return absl::OkStatus();
  }
  void OnGradientReady(int) override {}
  absl::StatusOr<StepStats> FinishStep(int64_t) override {
    StepStats stats;
    stats.hook_wait_s = hook_wait_s;
    return stats;
  }
  const ParamUseHooks* ParamUse() const override { return &hooks_; }
  int64_t PeakParamBytes() const override { return 40; }
  int64_t PeakGradBytes() const override { return 44; }
  int inits = 0;
  int needed = 0;
  int forward_done = 0;
  double hook_wait_s = 0;

 private:
  ParamUseHooks hooks_;
};

// HostBackend, logging each call; ForwardBackward fails at `fail_at_step`
// (-1: never).
class LoggingBackend final : public ComputeBackend {
 public:
  LoggingBackend(Model& model, int fail_at_step)
      : host_(model), fail_at_step_(fail_at_step) {}

  absl::Status Init(uint64_t seed, SyncContext& context) override {
    log.push_back("Init");
    return host_.Init(seed, context);
  }
  SyncStrategy& Adapt(SyncStrategy& strategy) override {
    log.push_back("Adapt");
    return host_.Adapt(strategy);
  }
  void BeginStep(int64_t step, bool measured) override {
    log.push_back(measured ? "BeginStep(measured)" : "BeginStep");
    step_ = step;
  }
  absl::StatusOr<double> ForwardBackward(
      const Batch& batch, const GradientReadyFn& on_ready) override {
    log.push_back("ForwardBackward");
    if (step_ == fail_at_step_) return absl::InternalError("device fault");
    return host_.ForwardBackward(batch, on_ready);
  }
  double ComputeSeconds(double wall_s) const override { return wall_s; }
  bool PrefetchesBatches() const override { return prefetch; }
  absl::Status PrepareBatch(const Batch&) override {  // another thread
    ++prepared;
    return absl::OkStatus();
  }
  absl::Status StashGradients(bool first) override {
    log.push_back(first ? "Stash(first)" : "Stash");
    return host_.StashGradients(first);
  }
  absl::Status FoldStashedGradient(int tensor, int passes) override {
    ++folds;
    return host_.FoldStashedGradient(tensor, passes);
  }
  int64_t StashBytes() const override { return host_.StashBytes(); }
  void EndSteps() override { log.push_back("EndSteps"); }
  absl::StatusOr<double> Evaluate(const Batch& batch) override {
    log.push_back("Evaluate");
    return host_.Evaluate(batch);
  }
  absl::StatusOr<std::vector<float>> FinalParams() override {
    log.push_back("FinalParams");
    return host_.FinalParams();
  }
  std::string model_name() const override { return host_.model_name(); }
  nlohmann::json RecordFields() const override {
    return {{"device", "test"}, {"timing", "test_clock"}, {"emulated", false}};
  }

  std::vector<std::string> log;
  int folds = 0;
  bool prefetch = false;
  std::atomic<int> prepared{0};

 private:
  HostBackend host_;
  const int fail_at_step_;
  int64_t step_ = -1;
};

ModelBundle SmallMlp() {
  ModelOptions options;
  options.mlp_widths = {8, 16, 4};
  absl::StatusOr<ModelBundle> bundle = MakeModel(options);
  EXPECT_TRUE(bundle.ok()) << bundle.status();
  return *std::move(bundle);
}

TrainJob Job(Dataset& dataset, SyncStrategy& strategy) {
  TrainJob job;
  job.dataset = &dataset;
  job.strategy = &strategy;
  job.options.batch_size = 4;
  job.options.steps = 3;
  job.options.warmup_steps = 1;
  return job;
}

TEST(TrainerTest, DrivesTheBackendInOrderAndRecordsEachStepOnce) {
  ModelBundle bundle = SmallMlp();
  CountingStrategy strategy;
  LoggingBackend backend(*bundle.model, /*fail_at_step=*/-1);
  TrainJob job = Job(*bundle.dataset, strategy);
  std::vector<nlohmann::json> steps;
  job.on_record = [&steps](const nlohmann::json& r) { steps.push_back(r); };

  absl::StatusOr<TrainResult> result = RunTraining(backend, job);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(absl::StrJoin(backend.log, ","),
            "Init,Adapt,BeginStep,ForwardBackward,"
            "BeginStep(measured),ForwardBackward,"
            "BeginStep(measured),ForwardBackward,"
            "EndSteps,Evaluate,FinalParams");
  EXPECT_EQ(strategy.steps, 3);
  EXPECT_EQ(strategy.shutdowns, 1);
  EXPECT_EQ(strategy.ready, 3 * bundle.model->layout().num_tensors());
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[2]["step"], 2);
  EXPECT_EQ(result->params.size(),
            static_cast<size_t>(bundle.model->layout().total_elements()));

  const nlohmann::json& f = result->final_record;
  EXPECT_EQ(f["event"], "final");
  EXPECT_EQ(f["strategy"], "counting");
  EXPECT_EQ(f["model"], bundle.model->name());
  EXPECT_EQ(f["batch_size"], 4);
  EXPECT_EQ(f["steps"], 3);
  EXPECT_EQ(f["start_step"], 0);
  EXPECT_EQ(f["warmup_steps"], 1);
  EXPECT_EQ(f["measured_steps"], 2);
  EXPECT_EQ(f["eval_loss"], result->eval_loss);
  EXPECT_EQ(f["device"], "test");
  EXPECT_EQ(f["timing"], "test_clock");
  for (const char* key :
       {"rank", "world_size", "utilization", "throughput", "compute_s",
        "wall_s", "bytes_sent", "bytes_received", "emulated"}) {
    EXPECT_TRUE(f.contains(key)) << key;
  }
  EXPECT_FALSE(f.contains("variant"));  // the strategy has none
  // What the worker holds: one flat buffer each of parameters and
  // gradients, the strategy's optimizer state, and the process's peak RSS.
  const int64_t model_bytes = bundle.model->layout().total_bytes();
  EXPECT_EQ(f["param_bytes"], model_bytes);
  EXPECT_EQ(f["grad_bytes"], model_bytes);
  EXPECT_EQ(f["optimizer_state_bytes"], 123);
  EXPECT_GT(f["peak_rss_bytes"].get<int64_t>(), 2 * model_bytes);
  // Every ringside process flushes denormals (common/denormals.h).
  EXPECT_EQ(f["denormals"], "flushed_to_zero");
}

// accumulate_steps = 3: three passes a step, the first two stashed, the
// strategy seeing each gradient once (folded) and one FinishStep; the
// stash counted as gradient memory.
TEST(TrainerTest, AccumulationRunsPassesAndSynchronizesOnce) {
  ModelBundle bundle = SmallMlp();
  CountingStrategy strategy;
  LoggingBackend backend(*bundle.model, /*fail_at_step=*/-1);
  TrainJob job = Job(*bundle.dataset, strategy);
  job.options.steps = 2;
  job.options.accumulate_steps = 3;
  std::vector<nlohmann::json> steps;
  job.on_record = [&steps](const nlohmann::json& r) { steps.push_back(r); };

  absl::StatusOr<TrainResult> result = RunTraining(backend, job);
  ASSERT_TRUE(result.ok()) << result.status();
  const std::string step =
      "ForwardBackward,Stash(first),ForwardBackward,Stash,ForwardBackward";
  EXPECT_EQ(absl::StrJoin(backend.log, ","),
            absl::StrCat("Init,Adapt,BeginStep,", step, ",BeginStep(measured),",
                         step, ",EndSteps,Evaluate,FinalParams"));
  const int tensors = bundle.model->layout().num_tensors();
  EXPECT_EQ(strategy.steps, 2);
  EXPECT_EQ(strategy.ready, 2 * tensors);
  EXPECT_EQ(backend.folds, 2 * tensors);
  ASSERT_EQ(steps.size(), 2u);
  const nlohmann::json& f = result->final_record;
  EXPECT_EQ(f["accumulate_steps"], 3);
  const int64_t model_bytes = bundle.model->layout().total_bytes();
  EXPECT_EQ(f["grad_bytes"], 2 * model_bytes);  // gradients + the stash

  job.options.accumulate_steps = 0;
  absl::StatusOr<TrainResult> bad = RunTraining(backend, job);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("accumulate_steps"), std::string::npos);
}

// A backend that prefetches (the CUDA backend does) trains on the same
// batches in the same order: the same parameters to the bit, with every
// pass's batch prepared once on the prefetcher's thread.
TEST(TrainerTest, PrefetchedBatchesTrainAlike) {
  auto train = [](bool prefetch, int* prepared) {
    ModelBundle bundle = SmallMlp();
    CountingStrategy strategy;
    LoggingBackend backend(*bundle.model, /*fail_at_step=*/-1);
    backend.prefetch = prefetch;
    TrainJob job = Job(*bundle.dataset, strategy);
    job.options.steps = 4;
    job.options.accumulate_steps = 2;
    absl::StatusOr<TrainResult> result = RunTraining(backend, job);
    EXPECT_TRUE(result.ok()) << result.status();
    *prepared = backend.prepared.load();
    return result.ok() ? result->params : std::vector<float>();
  };
  int prepared_off = -1;
  int prepared_on = -1;
  const std::vector<float> in_line = train(false, &prepared_off);
  const std::vector<float> prefetched = train(true, &prepared_on);
  ASSERT_FALSE(in_line.empty());
  EXPECT_EQ(prefetched, in_line);
  EXPECT_EQ(prepared_off, 0);
  EXPECT_EQ(prepared_on, 4 * 2);
}

// eval_every = 2 over 5 steps: evaluations after steps 1, 3 and 4 (the
// last), each with the samples seen and the training time so far; the last
// equals the final evaluation, and evaluating changes no parameter.
TEST(TrainerTest, EvaluatesEveryNStepsAndAfterTheLast) {
  ModelBundle bundle = SmallMlp();
  CountingStrategy strategy;
  TrainJob job = Job(*bundle.dataset, strategy);
  job.options.steps = 5;
  job.options.eval_every = 2;
  std::vector<nlohmann::json> evals;
  job.on_record = [&evals](const nlohmann::json& r) {
    if (r["event"] == "eval") evals.push_back(r);
  };
  absl::StatusOr<TrainResult> result = Train(*bundle.model, job);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(evals.size(), 3u);
  const std::vector<int> steps = {1, 3, 4};
  double last_wall = 0;
  for (size_t i = 0; i < evals.size(); ++i) {
    EXPECT_EQ(evals[i]["step"], steps[i]);
    EXPECT_EQ(evals[i]["rank"], 0);
    EXPECT_EQ(evals[i]["samples"], (steps[i] + 1) * 4);  // batch 4, 1 worker
    EXPECT_GT(evals[i]["train_wall_s"].get<double>(), last_wall);
    last_wall = evals[i]["train_wall_s"].get<double>();
  }
  EXPECT_DOUBLE_EQ(evals.back()["loss"].get<double>(), result->eval_loss);

  CountingStrategy again;
  TrainJob plain = Job(*bundle.dataset, again);
  plain.options.steps = 5;
  absl::StatusOr<TrainResult> without = Train(*bundle.model, plain);
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_EQ(without->params, result->params);

  job.options.eval_every = -1;
  EXPECT_EQ(Train(*bundle.model, job).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// A straggler with real compute is stretched by waiting, and says so.
TEST(TrainerTest, StragglerWithRealComputeWaitsAndSaysSo) {
  ModelBundle bundle = SmallMlp();
  CountingStrategy strategy;
  TrainJob job = Job(*bundle.dataset, strategy);
  job.stragglers = *ParseStragglers("0:2", 0, 1, 1);
  absl::StatusOr<TrainResult> result = Train(*bundle.model, job);
  ASSERT_TRUE(result.ok()) << result.status();
  const nlohmann::json& f = result->final_record;
  EXPECT_EQ(f["stragglers"], "rank 0 x2");
  EXPECT_EQ(f["straggler_mode"], "real compute stretched by waiting");
  EXPECT_DOUBLE_EQ(f["compute_factor_mean"].get<double>(), 2.0);
  EXPECT_GT(f["straggler_wait_s"].get<double>(), 0.0);
  // Without stragglers the record has none of it.
  CountingStrategy plain;
  absl::StatusOr<TrainResult> without =
      Train(*bundle.model, Job(*bundle.dataset, plain));
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_FALSE(without->final_record.contains("stragglers"));
}

TEST(TrainerTest, FinalRecordCarriesTheStrategysVariant) {
  ModelBundle bundle = SmallMlp();
  CountingStrategy strategy;
  strategy.variant = "τ=3";
  LoggingBackend backend(*bundle.model, /*fail_at_step=*/-1);
  absl::StatusOr<TrainResult> result =
      RunTraining(backend, Job(*bundle.dataset, strategy));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->final_record["variant"], "τ=3");
}

// The strategy writes its own settings into the final record (its
// RecordFields); a strategy with none adds nothing.
TEST(TrainerTest, FinalRecordCarriesTheStrategysOwnFields) {
  ModelBundle bundle = SmallMlp();
  CountingStrategy strategy;
  strategy.record_fields = {{"ring_bucket_bytes", 0}, {"ps_chunk_bytes", 8192}};
  LoggingBackend backend(*bundle.model, /*fail_at_step=*/-1);
  absl::StatusOr<TrainResult> result =
      RunTraining(backend, Job(*bundle.dataset, strategy));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->final_record["ring_bucket_bytes"], 0);
  EXPECT_EQ(result->final_record["ps_chunk_bytes"], 8192);
  CountingStrategy plain;
  LoggingBackend plain_backend(*bundle.model, -1);
  result = RunTraining(plain_backend, Job(*bundle.dataset, plain));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->final_record.contains("ring_bucket_bytes"));
  EXPECT_FALSE(result->final_record.contains("ps_chunk_bytes"));
}

TEST(TrainerTest, HostTrainSaysCpuAndSteadyClock) {
  ModelBundle bundle = SmallMlp();
  CountingStrategy strategy;
  absl::StatusOr<TrainResult> result =
      Train(*bundle.model, Job(*bundle.dataset, strategy));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->final_record["device"], "cpu");
  EXPECT_EQ(result->final_record["timing"], "steady_clock");
  EXPECT_EQ(result->final_record["emulated"], false);
  EXPECT_EQ(result->final_record["model"], "mlp");
  EXPECT_EQ(result->final_record["compute_threads"], Eigen::nbThreads());
}

// With one Eigen thread and real compute the final record carries the
// compute's CPU time (the training thread's CPU clock, at most its wall
// time); a strategy that blocked in a parameter-use hook, or more than one
// Eigen thread, leaves it out.
TEST(TrainerTest, HostComputeOnOneThreadReportsItsCpuTime) {
  const int threads = Eigen::nbThreads();
  Eigen::setNbThreads(1);
  ModelBundle bundle = SmallMlp();
  CountingStrategy strategy;
  absl::StatusOr<TrainResult> result =
      Train(*bundle.model, Job(*bundle.dataset, strategy));
  ASSERT_TRUE(result.ok()) << result.status();
  const nlohmann::json& f = result->final_record;
  ASSERT_TRUE(f.contains("compute_cpu_s")) << f.dump();
  EXPECT_GT(f["compute_cpu_s"].get<double>(), 0.0);
  EXPECT_LE(f["compute_cpu_s"].get<double>(),
            f["compute_s"].get<double>() + 1e-3);
  HookingStrategy hooking;
  hooking.hook_wait_s = 1e-4;
  result = Train(*bundle.model, Job(*bundle.dataset, hooking));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->final_record.contains("compute_cpu_s"));
  Eigen::setNbThreads(2);
  CountingStrategy threaded;
  result = Train(*bundle.model, Job(*bundle.dataset, threaded));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->final_record.contains("compute_cpu_s"));
  Eigen::setNbThreads(threads);
}

// Emulated compute sleeps on the training thread and writes its synthetic
// gradients there: its CPU time is reported, well under its wall time.
TEST(TrainerTest, EmulatedComputeReportsItsCpuTime) {
  ModelOptions options;
  options.name = "synthetic";
  options.profile = "mobilenet_v2";
  // Well above the gradients' own CPU time (7-14 ms here; more on a
  // portable build), so that the sleep shows.
  options.emulated_compute_ms = 80;
  absl::StatusOr<ModelBundle> bundle = MakeModel(options);
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  CountingStrategy strategy;
  absl::StatusOr<TrainResult> result =
      Train(*bundle->model, Job(*bundle->dataset, strategy));
  ASSERT_TRUE(result.ok()) << result.status();
  const nlohmann::json& f = result->final_record;
  ASSERT_TRUE(f.contains("compute_cpu_s")) << f.dump();
  EXPECT_GT(f["compute_cpu_s"].get<double>(), 0.0);
  // Every step sleeps out its 80 ms; the gradients take a few.
  EXPECT_LT(f["compute_cpu_s"].get<double>(),
            0.75 * f["compute_s"].get<double>());
}

// Abort's default is Shutdown: counted as one.
TEST(TrainerTest, EarlyReturnAbortsTheStrategyOnce) {
  ModelBundle bundle = SmallMlp();
  CountingStrategy strategy;
  LoggingBackend backend(*bundle.model, /*fail_at_step=*/1);
  absl::StatusOr<TrainResult> result =
      RunTraining(backend, Job(*bundle.dataset, strategy));
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(strategy.shutdowns, 1);
}

TEST(TrainerTest, JobWithoutDatasetOrStrategyIsRefused) {
  ModelBundle bundle = SmallMlp();
  CountingStrategy strategy;
  TrainJob job = Job(*bundle.dataset, strategy);
  job.dataset = nullptr;
  EXPECT_EQ(Train(*bundle.model, job).status().code(),
            absl::StatusCode::kInvalidArgument);
  job = Job(*bundle.dataset, strategy);
  job.strategy = nullptr;
  EXPECT_EQ(Train(*bundle.model, job).status().code(),
            absl::StatusCode::kInvalidArgument);
  job = Job(*bundle.dataset, strategy);
  job.options.warmup_steps = 3;
  EXPECT_EQ(Train(*bundle.model, job).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ringside

namespace ringside {
namespace {

TEST(TrainerTest, ParamUseHooksReachTheModelAndTheRecord) {
  ModelBundle bundle = SmallMlp();  // 8-16-4: two layers
  HookingStrategy strategy;
  strategy.hook_wait_s = 1e6;  // longer than any step: compute is all wait
  TrainJob job = Job(*bundle.dataset, strategy);
  absl::StatusOr<TrainResult> result = Train(*bundle.model, job);
  ASSERT_TRUE(result.ok()) << result.status();
  // Per step: forward needs fc0 and fc1 (weight and bias) and is done with
  // them; backward needs fc1.weight again (fc0's weight is not read).
  EXPECT_EQ(strategy.needed, 3 * 5);
  EXPECT_EQ(strategy.forward_done, 3 * 4);
  EXPECT_EQ(result->final_record["param_bytes"], 40);
  EXPECT_EQ(result->final_record["grad_bytes"], 44);
  // The hooks' waits are taken out of the compute time.
  EXPECT_EQ(result->final_record["utilization"].get<double>(), 0.0);
  // The loop takes the hooks back: later passes call nothing.
  const int before = strategy.needed;
  Batch batch;
  ASSERT_TRUE(bundle.dataset->TrainBatch(0, 4, &batch).ok());
  std::vector<float> params(bundle.model->layout().total_elements(), 0.1f);
  std::vector<float> grads(params.size());
  ASSERT_TRUE(
      bundle.model->ForwardBackward(batch, params, absl::MakeSpan(grads), {})
          .ok());
  EXPECT_EQ(strategy.needed, before);
}

TEST(TrainerTest, BackendWithoutParamUseIsRefusedBeforeInit) {
  ModelBundle bundle = SmallMlp();
  HookingStrategy strategy;
  // LoggingBackend keeps ComputeBackend's default: no parameter use.
  LoggingBackend backend(*bundle.model, /*fail_at_step=*/-1);
  absl::StatusOr<TrainResult> result =
      RunTraining(backend, Job(*bundle.dataset, strategy));
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(std::string(result.status().message()).find("parameter use"),
            std::string::npos)
      << result.status();
  EXPECT_EQ(strategy.inits, 0);
}

}  // namespace
}  // namespace ringside

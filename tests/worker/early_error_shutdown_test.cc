// An early error while a strategy's communication is in flight: the
// training loop aborts the strategy (joins its threads) before the host
// backend's parameter and gradient buffers are freed. Two ranks as threads:
// rank 0's model reports every gradient of step 1 (the strategy starts
// reducing them) and then fails; rank 1 reaches step 1's collectives only
// later, so rank 0's reduction completes, and writes its result, after
// rank 0's Train has returned. Without the shutdown that write lands in
// freed memory: run under AddressSanitizer (tools/run_tests.sh builds this
// test with --config=asan) it is a heap-use-after-free.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "collectives/in_memory_store.h"
#include "models/model_factory.h"
#include "server/local_ps_cluster.h"
#include "tests/testing/oracle_harness.h"
#include "worker/sync_strategy.h"
#include "worker/trainer.h"

namespace ringside::testing {
namespace {

constexpr int64_t kFailingStep = 1;

// Wraps a model: at step kFailingStep, rank 0 runs forward and backward
// (reporting every gradient) and then fails; rank 1 first waits `delay`.
class FaultAfterBackward final : public Model {
 public:
  FaultAfterBackward(std::unique_ptr<Model> inner, int rank,
                     absl::Duration delay)
      : inner_(std::move(inner)), rank_(rank), delay_(delay) {}
  std::string name() const override { return inner_->name(); }
  const TensorLayout& layout() const override { return inner_->layout(); }
  void InitParams(uint64_t seed, absl::Span<float> params) const override {
    inner_->InitParams(seed, params);
  }
  absl::StatusOr<double> ForwardBackward(
      const Batch& batch, absl::Span<const float> params,
      absl::Span<float> grads, const GradientReadyFn& on_ready) override {
    const bool faulty_step = calls_++ == kFailingStep;
    if (faulty_step && rank_ == 1) absl::SleepFor(delay_);
    absl::StatusOr<double> loss =
        inner_->ForwardBackward(batch, params, grads, on_ready);
    if (faulty_step && rank_ == 0) {
      return absl::InternalError("injected fault after backward");
    }
    return loss;
  }
  absl::StatusOr<double> Evaluate(const Batch& batch,
                                  absl::Span<const float> params) override {
    return inner_->Evaluate(batch, params);
  }
  double FlopsPerExample() const override { return inner_->FlopsPerExample(); }
  bool ReportsParamUse() const override { return inner_->ReportsParamUse(); }
  void SetParamUseHooks(const ParamUseHooks* hooks) override {
    inner_->SetParamUseHooks(hooks);
  }

 private:
  std::unique_ptr<Model> inner_;
  const int rank_;
  const absl::Duration delay_;
  int64_t calls_ = 0;
};

class EarlyErrorShutdownTest : public ::testing::TestWithParam<std::string> {
};

TEST_P(EarlyErrorShutdownTest, StrategyStopsBeforeTheBuffersAreFreed) {
  const std::string strategy = GetParam();
  OracleSetup setup;
  setup.steps = kFailingStep + 1;
  // Rank 1 gives up on rank 0 within this (rank 0 stops after step 1).
  setup.sync.rpc_timeout = absl::Seconds(5);
  SyncOptions sync = setup.sync;
  InMemoryStore store;
  absl::StatusOr<StrategyInfo> info = StrategyRegistry::Find(strategy);
  ASSERT_TRUE(info.ok()) << info.status();
  if (info->needs_store) sync.store = &store;
  std::unique_ptr<LocalPsCluster> servers;
  if (info->servers != ServerNeed::kNone) {
    const int shards = info->servers == ServerNeed::kOne ? 1 : 2;
    absl::StatusOr<std::unique_ptr<LocalPsCluster>> started =
        LocalPsCluster::Start(shards, 2, absl::Seconds(5));
    ASSERT_TRUE(started.ok()) << started.status();
    servers = *std::move(started);
    sync.servers = servers->addresses();
  }
  std::vector<absl::Status> status(2);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      status[r] = [&]() -> absl::Status {
        absl::StatusOr<ModelBundle> bundle = MakeModel(setup.model);
        if (!bundle.ok()) return bundle.status();
        FaultAfterBackward model(std::move(bundle->model), r,
                                 absl::Milliseconds(300));
        absl::StatusOr<std::unique_ptr<SyncStrategy>> made =
            StrategyRegistry::Create(strategy);
        if (!made.ok()) return made.status();
        absl::StatusOr<TrainResult> result =
            Train(model, OracleJob(setup, bundle->dataset.get(), made->get(),
                                   RankInfo{r, 2}, setup.batch_size, sync));
        // The strategy outlives Train's backend until here, as a worker's
        // does: its threads, if still running, would write into freed
        // buffers now.
        absl::SleepFor(absl::Milliseconds(r == 0 ? 600 : 0));
        return result.status();
      }();
    });
  }
  for (std::thread& t : ranks) t.join();
  EXPECT_EQ(status[0].code(), absl::StatusCode::kInternal) << status[0];
  EXPECT_NE(status[0].message().find("injected fault"), std::string::npos)
      << status[0];
}

INSTANTIATE_TEST_SUITE_P(ThreadedStrategies, EarlyErrorShutdownTest,
                         ::testing::Values("sps", "dps", "async_ps", "ring",
                                           "ring_fp16", "ring_bf16",
                                           "hierarchical",
                                           "fusion", "zero1", "zero2",
                                           "zero3"));

}  // namespace
}  // namespace ringside::testing

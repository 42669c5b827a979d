// async_ps (stale synchronous parallel on the parameter servers):
//  - tau = 0 passes the equivalence oracle (N in {1, 2, 4}, K in {1, 2}) and
//    equals sps bit for bit (N = 2: the server's sum of two pushes does not
//    depend on their order) and to 1e-6 with N = 4;
//  - tau > 0 with a deliberately slow rank: every step's gradient is
//    computed on parameters at most tau versions old, the fast rank does
//    run tau versions ahead, the loss still falls, and after Shutdown's
//    drain every rank holds the same final parameters.
#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "server/local_ps_cluster.h"
#include "tests/testing/oracle_harness.h"
#include "worker/strategies/ps/async_ps_options.h"
#include "worker/strategies/ps/async_ps_strategy.h"
#include "worker/strategies/ps/ps_options.h"

namespace ringside::testing {
namespace {

class AsyncPsOracleTest
    : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(AsyncPsOracleTest, StalenessZeroMatchesSingleWorkerWithGlobalBatch) {
  const auto [n, servers] = GetParam();
  OracleSetup setup;
  setup.num_servers = servers;
  setup.sync.strategy.Set(AsyncPsOptions{0});
  absl::StatusOr<TrainResult> reference = RunReference(setup, n);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::StatusOr<OracleRun> run = RunWorkers(setup, "async_ps", n);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(MatchesReference(*run, *reference));
}

INSTANTIATE_TEST_SUITE_P(WorkersAndServers, AsyncPsOracleTest,
                         ::testing::Combine(::testing::Values(1, 2, 4),
                                            ::testing::Values(1, 2)));

// The final record carries the staleness bound and the chunk async_ps ran
// with (its cost formula's overlap and pipeline).
TEST(AsyncPsStrategyTest, FinalRecordCarriesItsStalenessAndChunk) {
  OracleSetup setup;
  setup.num_servers = 1;
  setup.steps = 3;
  setup.sync.strategy.Set(AsyncPsOptions{2});
  absl::StatusOr<OracleRun> run = RunWorkers(setup, "async_ps", 2);
  ASSERT_TRUE(run.ok()) << run.status();
  for (const nlohmann::json& record : run->final_records) {
    EXPECT_EQ(record["staleness"], 2) << record.dump();
    EXPECT_EQ(record["ps_chunk_bytes"], setup.sync.strategy.Get<PsOptions>().chunk_bytes)
        << record.dump();
    EXPECT_FALSE(record.contains("ring_bucket_bytes")) << record.dump();
  }
}

TEST(AsyncPsStrategyTest, StalenessZeroEqualsSpsBitForBit) {
  for (const std::string optimizer : {"sgd", "adam"}) {
    OracleSetup setup;
    setup.num_servers = 1;
    setup.optimizer.type = optimizer;
    if (optimizer == "adam") setup.optimizer.lr = 0.01f;
    absl::StatusOr<OracleRun> sps = RunWorkers(setup, "sps", 2);
    absl::StatusOr<OracleRun> async_ps = RunWorkers(setup, "async_ps", 2);
    ASSERT_TRUE(sps.ok()) << sps.status();
    ASSERT_TRUE(async_ps.ok()) << async_ps.status();
    for (int r = 0; r < 2; ++r) {
      EXPECT_EQ(async_ps->params[r], sps->params[r])
          << optimizer << ", rank " << r;
      EXPECT_EQ(async_ps->eval_loss[r], sps->eval_loss[r]);
    }
  }
}

TEST(AsyncPsStrategyTest, StalenessZeroEqualsSpsWithFourWorkers) {
  OracleSetup setup;
  setup.num_servers = 1;
  absl::StatusOr<OracleRun> sps = RunWorkers(setup, "sps", 4);
  absl::StatusOr<OracleRun> async_ps = RunWorkers(setup, "async_ps", 4);
  ASSERT_TRUE(sps.ok()) << sps.status();
  ASSERT_TRUE(async_ps.ok()) << async_ps.status();
  // With N > 2 the server's float sum depends on the pushes' arrival order
  // (in sps as well), hence a tolerance rather than equality.
  EXPECT_LE(RelativeL2(async_ps->params[0], sps->params[0]), 1e-6);
}

TEST(AsyncPsStrategyTest, RejectsNegativeStaleness) {
  OracleSetup setup;
  setup.num_servers = 1;
  setup.sync.strategy.Set(AsyncPsOptions{-1});
  absl::StatusOr<OracleRun> run = RunWorkers(setup, "async_ps", 1);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(run.status().message().find("staleness"), std::string::npos)
      << run.status();
}

// Delays every FinishStep of the wrapped strategy: a straggler.
class Straggler : public SyncStrategy {
 public:
  Straggler(SyncStrategy* inner, absl::Duration delay)
      : inner_(inner), delay_(delay) {}
  std::string name() const override { return inner_->name(); }
  absl::Status Init(const SyncContext& c) override { return inner_->Init(c); }
  void OnGradientReady(int i) override { inner_->OnGradientReady(i); }
  absl::StatusOr<StepStats> FinishStep(int64_t step) override {
    absl::SleepFor(delay_);
    return inner_->FinishStep(step);
  }
  absl::Status Shutdown() override { return inner_->Shutdown(); }
  absl::Status Quiesce(int64_t step) override { return inner_->Quiesce(step); }

 private:
  SyncStrategy* inner_;
  absl::Duration delay_;
};

struct StaleRun {
  std::vector<std::vector<int64_t>> versions_used;  // per rank, per step
  std::vector<TrainResult> results;                 // per rank
};

// N async_ps workers on one in-process server; rank 1 is a straggler.
// With eval_every > 0 the trainer evaluates mid-run (and quiesces first).
absl::StatusOr<StaleRun> RunWithStraggler(const OracleSetup& setup, int n,
                                          absl::Duration delay,
                                          int eval_every = 0) {
  absl::StatusOr<std::unique_ptr<LocalPsCluster>> ps =
      LocalPsCluster::Start(1, n, absl::Seconds(30));
  if (!ps.ok()) return ps.status();
  SyncOptions sync = setup.sync;
  sync.servers = (*ps)->addresses();
  StaleRun run;
  run.versions_used.resize(n);
  run.results.resize(n);
  std::vector<absl::Status> status(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      status[r] = [&]() -> absl::Status {
        absl::StatusOr<ModelBundle> bundle = MakeModel(setup.model);
        if (!bundle.ok()) return bundle.status();
        AsyncPsStrategy async_ps;
        Straggler slow(&async_ps, delay);
        SyncStrategy& strategy =
            r == 1 ? static_cast<SyncStrategy&>(slow) : async_ps;
        TrainJob job;
        job.dataset = bundle->dataset.get();
        job.strategy = &strategy;
        job.rank = RankInfo{r, n};
        job.optimizer = setup.optimizer;
        job.sync = sync;
        job.options.batch_size = setup.batch_size;
        job.options.steps = setup.steps;
        job.options.warmup_steps = 0;
        job.options.eval_every = eval_every;
        absl::StatusOr<TrainResult> result = Train(*bundle->model, job);
        if (!result.ok()) return result.status();
        run.results[r] = *std::move(result);
        run.versions_used[r] = async_ps.versions_used();
        return absl::OkStatus();
      }();
    });
  }
  for (std::thread& t : threads) t.join();
  for (int r = 0; r < n; ++r) {
    if (!status[r].ok()) {
      return Annotate(status[r], absl::StrCat("rank ", r));
    }
  }
  return run;
}

class AsyncPsStalenessTest : public ::testing::TestWithParam<int> {};

TEST_P(AsyncPsStalenessTest, StalenessIsBoundedAndUsedAndTrainingConverges) {
  const int tau = GetParam();
  OracleSetup setup;
  setup.sync.strategy.Set(AsyncPsOptions{tau});
  setup.steps = 40;
  absl::StatusOr<StaleRun> run =
      RunWithStraggler(setup, 2, absl::Milliseconds(50));
  ASSERT_TRUE(run.ok()) << run.status();
  int64_t max_lag_rank0 = 0;
  for (int r = 0; r < 2; ++r) {
    const std::vector<int64_t>& used = run->versions_used[r];
    ASSERT_EQ(used.size(), static_cast<size_t>(setup.steps));
    for (int64_t t = 0; t < setup.steps; ++t) {
      EXPECT_GE(used[t], t - tau) << "rank " << r << " step " << t;
      EXPECT_LE(used[t], t) << "rank " << r << " step " << t;
      if (r == 0) max_lag_rank0 = std::max(max_lag_rank0, t - used[t]);
    }
  }
  // The fast rank really ran ahead of the straggler by the whole bound.
  EXPECT_EQ(max_lag_rank0, tau);
  // Shutdown drained every update: the ranks agree on the final model.
  EXPECT_EQ(run->results[0].params, run->results[1].params);
  // And it trained: far below the loss after one synchronous step.
  OracleSetup one = setup;
  one.steps = 1;
  absl::StatusOr<TrainResult> early = RunReference(one, 2);
  ASSERT_TRUE(early.ok()) << early.status();
  EXPECT_LT(run->results[0].eval_loss, 0.8 * early->eval_loss)
      << "tau=" << tau;
}

INSTANTIATE_TEST_SUITE_P(Tau, AsyncPsStalenessTest,
                         ::testing::Values(1, 2, 4));

// Before each mid-run evaluation (after steps 4, 9, 14, ...) the trainer
// quiesces: every round so far finishes on the clock. The fast rank then
// installs version t+1 at its next FinishStep, so step t+2 uses it, where
// without the drain it runs tau = 2 versions behind the straggler. The
// drain installs nothing itself: step t+1 still used what FinishStep(t)
// installed, at most tau old.
TEST(AsyncPsStrategyTest, QuiesceFinishesTheRoundsBeforeAnEvaluation) {
  OracleSetup setup;
  setup.sync.strategy.Set(AsyncPsOptions{2});
  setup.steps = 20;
  absl::StatusOr<StaleRun> run = RunWithStraggler(
      setup, 2, absl::Milliseconds(50), /*eval_every=*/5);
  ASSERT_TRUE(run.ok()) << run.status();
  const std::vector<int64_t>& used = run->versions_used[0];
  ASSERT_EQ(used.size(), 20u);
  for (int64_t t : {4, 9, 14}) {
    EXPECT_GE(used[t + 2], t + 1) << "step " << t + 2;
    EXPECT_GE(used[t + 1], t - 1) << "step " << t + 1;
  }
  // Between evaluations the fast rank still runs the whole bound ahead.
  EXPECT_EQ(used[8], 6);
  EXPECT_EQ(run->results[0].params, run->results[1].params);
}

}  // namespace
}  // namespace ringside::testing

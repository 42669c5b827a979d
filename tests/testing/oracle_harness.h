// Test harness for the equivalence oracle (docs/DESIGN.md): synchronous
// data-parallel SGD with N workers of batch b must equal one worker with
// batch N*b on the same data order. Runs N workers as threads in this
// process, each with its own model, dataset and strategy, against
// in-process parameter servers on loopback when the strategy needs them.
// testonly. Each call is blocking; the harness is not thread-safe.
#ifndef RINGSIDE_TESTS_TESTING_ORACLE_HARNESS_H_
#define RINGSIDE_TESTS_TESTING_ORACLE_HARNESS_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/relative_l2.h"
#include "core/optimizer_config.h"
#include "models/model_factory.h"
#include "worker/sync_strategy.h"
#include "worker/trainer.h"

namespace ringside::testing {

struct OracleSetup {
  ModelOptions model;         // small MLP by default (see .cc)
  OptimizerConfig optimizer;  // SGD + momentum by default
  SyncOptions sync;           // servers filled in by the harness
  int64_t batch_size = 8;     // per worker (b)
  int64_t steps = 8;          // K
  int64_t accumulate_steps = 1;  // k passes per step (workers only)
  int64_t eval_every = 0;        // mid-run evaluations (workers only)
  int num_servers = 0;        // in-process parameter servers to start
  OracleSetup();
};

struct OracleRun {
  std::vector<std::vector<float>> params;  // per rank
  std::vector<double> eval_loss;           // per rank
  std::vector<nlohmann::json> final_records;  // per rank
};

// The TrainJob every oracle run trains: setup's optimizer and steps, no
// warm-up (every step counts), `batch_size` per worker, rank `rank`.
TrainJob OracleJob(const OracleSetup& setup, Dataset* dataset,
                   SyncStrategy* strategy, RankInfo rank, int64_t batch_size,
                   const SyncOptions& sync = {});

// One worker with batch N*b*k (k = setup.accumulate_steps) and the
// baseline strategy, without accumulation: the N workers' k passes of b
// examples each step see the same examples.
absl::StatusOr<TrainResult> RunReference(const OracleSetup& setup,
                                         int num_workers);

// N workers as threads with `strategy`, after starting setup.num_servers
// in-process parameter servers (shard order) when > 0.
absl::StatusOr<OracleRun> RunWorkers(const OracleSetup& setup,
                                     const std::string& strategy,
                                     int num_workers);

// Prepares `setup` for a registered strategy: the in-process parameter
// servers its ServerNeed asks for (one: 1, sharded: 2), the optimizer its
// oracle needs (UseOracleOptimizer) and, for a lossy one, its options with
// compression off (StrategyInfo::oracle_options).
void SetUpForStrategy(const StrategyInfo& info, OracleSetup& setup);

// When the strategy equals the reference under one optimizer only
// (StrategyInfo::oracle_optimizer) and `setup` trains with another: that
// one, Adam at lr 0.01 (the oracles' Adam rate), SGD at the setup's lr;
// the rest of setup.optimizer stays.
void UseOracleOptimizer(const StrategyInfo& info, OracleSetup& setup);

// RelativeL2 (common/relative_l2.h) is the oracles' measure.
using ::ringside::RelativeL2;

// The oracle's verdict: every rank's parameters within relative L2 error
// `tolerance` of the reference, eval loss within the same relative error,
// and every rank holding bit-identical parameters.
::testing::AssertionResult MatchesReference(const OracleRun& run,
                                            const TrainResult& reference,
                                            double tolerance = 1e-5);

// A registered strategy's verdict on `run` (of `setup` on `num_workers`
// workers): MatchesReference within its oracle_tolerance; for one with no
// exact setting (StrategyInfo::exact_setting false: sign compression),
// RanksAgreeAndItTrains, its gap left to the caller to record.
::testing::AssertionResult MeetsItsOracle(const StrategyInfo& info,
                                          const OracleSetup& setup,
                                          int num_workers,
                                          const OracleRun& run,
                                          const TrainResult& reference);

// The verdict on a lossy run of `strategy`: every rank bit-identical and
// each rank's eval loss below the reference's after one step of `setup`
// (it trains).
::testing::AssertionResult RanksAgreeAndItTrains(const std::string& strategy,
                                                 const OracleSetup& setup,
                                                 int num_workers,
                                                 const OracleRun& run);

}  // namespace ringside::testing

#endif  // RINGSIDE_TESTS_TESTING_ORACLE_HARNESS_H_

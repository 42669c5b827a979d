// hierarchical (reduce within a host, all-reduce across hosts' leaders,
// broadcast within the host), with ranks grouped into pretend hosts by
// --local_size on one machine:
//  - the equivalence oracle for N x L in {2x1, 4x1, 4x2, 4x4, 6x2, 6x3}
//    (and halving-doubling for 4x2), bit-identical ranks;
//  - one step in closed form: the averaged gradient, the host/leader
//    grouping and each rank's traffic;
//  - bad grouping fails at Init with INVALID_ARGUMENT naming the problem;
//  - ResolveLocalSize: flag, launcher variables in order, bad values.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "collectives/in_memory_store.h"
#include "tests/testing/oracle_harness.h"
#include "tests/testing/rank_threads.h"
#include "worker/strategies/allreduce/hierarchical_options.h"
#include "worker/strategies/allreduce/hierarchical_strategy.h"

namespace ringside::testing {
namespace {

struct Grouping {
  int workers;
  int local_size;
  std::string algorithm;
};

class HierarchicalOracleTest : public ::testing::TestWithParam<Grouping> {};

TEST_P(HierarchicalOracleTest, MatchesSingleWorkerWithGlobalBatch) {
  const Grouping& g = GetParam();
  OracleSetup setup;
  setup.sync.strategy.Set(HierarchicalOptions{g.local_size});
  setup.sync.allreduce_algorithm = g.algorithm;
  absl::StatusOr<TrainResult> reference = RunReference(setup, g.workers);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::StatusOr<OracleRun> run = RunWorkers(setup, "hierarchical", g.workers);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(MatchesReference(*run, *reference));
}

INSTANTIATE_TEST_SUITE_P(
    PretendHosts, HierarchicalOracleTest,
    ::testing::Values(Grouping{1, 1, "ring"}, Grouping{2, 1, "ring"},
                      Grouping{4, 1, "ring"}, Grouping{4, 2, "ring"},
                      Grouping{4, 2, "halving_doubling"},
                      Grouping{4, 4, "ring"}, Grouping{6, 2, "ring"},
                      Grouping{6, 3, "ring"}),
    [](const ::testing::TestParamInfo<Grouping>& info) {
      return std::to_string(info.param.workers / info.param.local_size) +
             "_hosts_x_" + std::to_string(info.param.local_size) + "_" +
             info.param.algorithm;
    });

TEST(HierarchicalStrategyTest, OneStepInClosedForm) {
  // 4 ranks as 2 hosts x 2: rank r's gradient is r + 1 everywhere, so the
  // average is (1 + 2 + 3 + 4) / 4 = 2.5 exactly.
  constexpr int kN = 4, kL = 2;
  InMemoryStore store;
  const TensorLayout layout =
      *TensorLayout::FromShapes({{"w", {5, 3}}, {"b", {3}}});
  const int64_t s = layout.total_bytes();  // 72
  std::vector<std::vector<float>> grads(kN);
  std::vector<StepStats> stats(kN);
  std::vector<std::pair<int, int>> grouping(kN);
  std::vector<std::string> variant(kN);
  ExpectAllOk(RunRanks(kN, [&](int r) -> absl::Status {
    HierarchicalStrategy strategy;
    std::vector<float> params(layout.total_elements(), 0.25f);
    grads[r].assign(layout.total_elements(), static_cast<float>(r + 1));
    SyncContext context;
    context.rank = r;
    context.world_size = kN;
    context.layout = layout;
    context.params = absl::MakeSpan(params);
    context.grads = absl::MakeSpan(grads[r]);
    context.optimizer.type = "sgd";
    context.optimizer.lr = 0.01f;
    context.options.store = &store;
    context.options.strategy.Set(HierarchicalOptions{kL});
    context.options.rpc_timeout = absl::Seconds(20);
    context.options.connect_timeout = absl::Seconds(10);
    if (absl::Status st = strategy.Init(context); !st.ok()) return st;
    grouping[r] = {strategy.local_size(), strategy.num_hosts()};
    variant[r] = strategy.Variant();
    strategy.OnGradientReady(1);
    strategy.OnGradientReady(0);
    absl::StatusOr<StepStats> step = strategy.FinishStep(0);
    if (!step.ok()) return step.status();
    stats[r] = *step;
    return strategy.Shutdown();
  }));
  for (int r = 0; r < kN; ++r) {
    for (float g : grads[r]) ASSERT_EQ(g, 2.5f) << "rank " << r;
    EXPECT_EQ(grouping[r], std::make_pair(kL, kN / kL));
    EXPECT_EQ(variant[r], "2×2");  // hosts × ranks per host
    // Local reduce-scatter and all-gather of 2 ranks: S/2 each way each;
    // the cross all-reduce of the S/2 shard between 2 hosts: S/2 each way.
    EXPECT_EQ(stats[r].bytes_sent, 3 * s / 2) << "rank " << r;
    EXPECT_EQ(stats[r].bytes_received, 3 * s / 2) << "rank " << r;
  }
}

struct BadGrouping {
  int workers;
  int local_size;
  const char* message;
};

class HierarchicalBadGroupingTest
    : public ::testing::TestWithParam<BadGrouping> {};

TEST_P(HierarchicalBadGroupingTest, FailsAtInitNamingTheProblem) {
  const BadGrouping& b = GetParam();
  OracleSetup setup;
  setup.steps = 1;
  setup.sync.strategy.Set(HierarchicalOptions{b.local_size});
  setup.sync.connect_timeout = absl::Seconds(2);
  absl::StatusOr<OracleRun> run = RunWorkers(setup, "hierarchical", b.workers);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), absl::StatusCode::kInvalidArgument)
      << run.status();
  EXPECT_NE(run.status().message().find(b.message), std::string::npos)
      << run.status();
}

INSTANTIATE_TEST_SUITE_P(
    Uneven, HierarchicalBadGroupingTest,
    ::testing::Values(
        BadGrouping{4, 3, "3 ranks per host, which does not divide "
                          "world_size=4"},
        BadGrouping{2, 4, "4 ranks per host, which does not divide "
                          "world_size=2"},
        BadGrouping{6, 4, "every host must hold the same number of ranks"},
        BadGrouping{2, -1, "local_size must be >= 0"}));

TEST(ResolveLocalSizeTest, FlagThenLauncherVariablesThenOneHost) {
  std::map<std::string, std::string> env;
  auto get = [&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  EXPECT_EQ(*ResolveLocalSize(0, 8, get), 8);  // nothing set: one host
  env["SLURM_NTASKS_PER_NODE"] = "2";
  EXPECT_EQ(*ResolveLocalSize(0, 8, get), 2);
  env["OMPI_COMM_WORLD_LOCAL_SIZE"] = "4";
  EXPECT_EQ(*ResolveLocalSize(0, 8, get), 4);
  env["LOCAL_WORLD_SIZE"] = "1";
  EXPECT_EQ(*ResolveLocalSize(0, 8, get), 1);
  EXPECT_EQ(*ResolveLocalSize(8, 8, get), 8);  // the flag wins
  EXPECT_EQ(*ResolveLocalSize(0, 8, nullptr), 8);
}

TEST(ResolveLocalSizeTest, BadValuesNameTheirSource) {
  std::map<std::string, std::string> env = {{"LOCAL_WORLD_SIZE", "two"}};
  auto get = [&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  absl::StatusOr<int> bad = ResolveLocalSize(0, 4, get);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("LOCAL_WORLD_SIZE='two'"),
            std::string::npos)
      << bad.status();
  env["LOCAL_WORLD_SIZE"] = "3";
  bad = ResolveLocalSize(0, 4, get);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("LOCAL_WORLD_SIZE gives 3"),
            std::string::npos)
      << bad.status();
  bad = ResolveLocalSize(3, 4, get);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--local_size gives 3"),
            std::string::npos)
      << bad.status();
  EXPECT_FALSE(ResolveLocalSize(-2, 4, get).ok());
}

}  // namespace
}  // namespace ringside::testing

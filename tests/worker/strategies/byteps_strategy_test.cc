// byteps (reduce within a host, one copy per host pushed to summation
// servers, the sum pulled and broadcast within the host), with ranks
// grouped into pretend hosts by --local_size on one machine:
//  - the equivalence oracle for N x L in {2x1, 4x1, 4x2, 4x4, 6x3} on 1 to
//    3 servers, bit-identical ranks;
//  - one step in closed form: the averaged gradient, the update, one push
//    a chunk per host on the servers and each rank's traffic;
//  - no servers fails at Init naming the flag.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collectives/in_memory_store.h"
#include "server/local_ps_cluster.h"
#include "tests/testing/oracle_harness.h"
#include "tests/testing/rank_threads.h"
#include "worker/strategies/allreduce/hierarchical_options.h"
#include "worker/strategies/ps/byteps_strategy.h"
#include "worker/strategies/ps/ps_options.h"

namespace ringside::testing {
namespace {

struct Grouping {
  int workers;
  int local_size;
  int servers;
};

class BytepsOracleTest : public ::testing::TestWithParam<Grouping> {};

TEST_P(BytepsOracleTest, MatchesSingleWorkerWithGlobalBatch) {
  const Grouping& g = GetParam();
  OracleSetup setup;
  setup.num_servers = g.servers;
  setup.sync.strategy.Set(HierarchicalOptions{g.local_size});
  absl::StatusOr<TrainResult> reference = RunReference(setup, g.workers);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::StatusOr<OracleRun> run = RunWorkers(setup, "byteps", g.workers);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(MatchesReference(*run, *reference));
  for (int r = 1; r < g.workers; ++r) {
    EXPECT_EQ(run->params[r], run->params[0]) << "rank " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(
    PretendHosts, BytepsOracleTest,
    ::testing::Values(Grouping{2, 1, 2}, Grouping{4, 1, 1},
                      Grouping{4, 2, 2}, Grouping{4, 4, 2},
                      Grouping{6, 3, 3}),
    [](const ::testing::TestParamInfo<Grouping>& info) {
      return std::to_string(info.param.workers / info.param.local_size) +
             "_hosts_x_" + std::to_string(info.param.local_size) + "_on_" +
             std::to_string(info.param.servers) + "_servers";
    });

SyncContext StepContext(int r, int n, const TensorLayout& layout,
                        std::vector<float>& params, std::vector<float>& grads,
                        InMemoryStore& store, const LocalPsCluster* ps,
                        int local_size) {
  SyncContext context;
  context.rank = r;
  context.world_size = n;
  context.layout = layout;
  context.params = absl::MakeSpan(params);
  context.grads = absl::MakeSpan(grads);
  context.optimizer.type = "sgd";
  context.optimizer.lr = 0.5f;
  context.optimizer.momentum = 0.0f;
  context.options.store = &store;
  context.options.strategy.Set(HierarchicalOptions{local_size});
  PsOptions chunks;
  chunks.chunk_bytes = 32;  // 8 floats: chunks span the two tensors
  context.options.strategy.Set(chunks);
  if (ps != nullptr) context.options.servers = ps->addresses();
  context.options.rpc_timeout = absl::Seconds(20);
  context.options.connect_timeout = absl::Seconds(10);
  return context;
}

TEST(BytepsStrategyTest, OneStepInClosedForm) {
  // 4 ranks as 2 hosts x 2 on 2 servers: rank r's gradient is r + 1
  // everywhere, so the average is (1 + 2 + 3 + 4) / 4 = 2.5 exactly and
  // each parameter moves from 1 to 1 - 0.5 * 2.5.
  constexpr int kN = 4, kL = 2;
  InMemoryStore store;
  absl::StatusOr<std::unique_ptr<LocalPsCluster>> ps =
      LocalPsCluster::Start(2, kN, absl::Seconds(20));
  ASSERT_TRUE(ps.ok()) << ps.status();
  const TensorLayout layout =
      *TensorLayout::FromShapes({{"w", {5, 3}}, {"b", {3}}});
  const int64_t m = layout.total_bytes();  // 72
  std::vector<std::vector<float>> params(kN), grads(kN);
  std::vector<StepStats> stats(kN);
  std::vector<std::string> variant(kN);
  ExpectAllOk(RunRanks(kN, [&](int r) -> absl::Status {
    BytepsStrategy strategy;
    params[r].assign(layout.total_elements(), 1.0f);
    grads[r].assign(layout.total_elements(), static_cast<float>(r + 1));
    SyncContext context =
        StepContext(r, kN, layout, params[r], grads[r], store, ps->get(), kL);
    if (absl::Status st = strategy.Init(context); !st.ok()) return st;
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
    for (float p : params[r]) ASSERT_EQ(p, 1.0f - 0.5f * 2.5f) << "rank " << r;
    EXPECT_EQ(variant[r], "2×2");  // hosts × ranks per host
    // The host's chain, once each way; a root pushes and pulls M besides.
    const int64_t root = r % kL == 0 ? m : 0;
    EXPECT_EQ(stats[r].bytes_sent, m + root) << "rank " << r;
    EXPECT_EQ(stats[r].bytes_received, m + root) << "rank " << r;
  }
  // Each chunk was pushed once per host, by the two roots (pushing ranks 0
  // and 1), and summed once.
  for (int s = 0; s < 2; ++s) {
    const ParamShard::UpdateCounts counts = (*ps)->shard(s).Counts();
    ASSERT_EQ(counts.pushes_per_rank.size(), 2u) << "server " << s;
    EXPECT_EQ(counts.pushes_min, 1) << "server " << s;
    EXPECT_EQ(counts.pushes_max, 1) << "server " << s;
    EXPECT_EQ(counts.applied_min, 1) << "server " << s;
    EXPECT_EQ((*ps)->shard(s).MinVersion(), 1) << "server " << s;
  }
}

TEST(BytepsStrategyTest, NoServersFailsAtInitNamingTheFlag) {
  InMemoryStore store;
  const TensorLayout layout = *TensorLayout::FromShapes({{"w", {4}}});
  std::vector<float> params(4, 0.0f), grads(4, 0.0f);
  BytepsStrategy strategy;
  absl::Status s = strategy.Init(
      StepContext(0, 1, layout, params, grads, store, nullptr, 1));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("--servers"), std::string::npos) << s;
}

}  // namespace
}  // namespace ringside::testing

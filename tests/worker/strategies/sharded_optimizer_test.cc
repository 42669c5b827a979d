// ShardedOptimizer: byte-balanced shards covering the buffer in rank order,
// and optimizer state for this rank's shard only (ZeRO stage 1's 1/N):
// SGD + momentum one float per element, Adam two.
#include "worker/strategies/sharded/sharded_optimizer.h"

#include <gtest/gtest.h>

namespace ringside {
namespace {

TEST(ShardedOptimizerTest, HoldsStateForItsOwnShardOnly) {
  const TensorLayout layout =
      *TensorLayout::FromShapes({{"w", {10, 7}}, {"b", {7}}});  // 77 floats
  std::vector<float> params(77), grads(77);
  for (const char* type : {"sgd", "adam"}) {
    for (int n : {1, 2, 3, 4}) {
      int64_t covered = 0;
      for (int r = 0; r < n; ++r) {
        SyncContext context;
        context.rank = r;
        context.world_size = n;
        context.layout = layout;
        context.params = absl::MakeSpan(params);
        context.grads = absl::MakeSpan(grads);
        context.optimizer.type = type;
        absl::StatusOr<std::unique_ptr<ShardedOptimizer>> s =
            ShardedOptimizer::Create(context, /*collective=*/nullptr);
        ASSERT_TRUE(s.ok()) << s.status();
        const std::vector<int64_t>& counts = (*s)->counts();
        ASSERT_EQ(counts.size(), static_cast<size_t>(n));
        EXPECT_EQ((*s)->shard().begin, covered) << type << " n=" << n;
        EXPECT_EQ((*s)->shard().size(), counts[r]);
        EXPECT_LE(counts[r], 77 / n + 1);
        EXPECT_GE(counts[r], 77 / n);
        const int per_element = std::string(type) == "adam" ? 2 : 1;
        EXPECT_EQ((*s)->state_bytes(), counts[r] * 4 * per_element)
            << type << " n=" << n << " rank " << r;
        covered += counts[r];
      }
      EXPECT_EQ(covered, 77);
    }
  }
  EXPECT_EQ(ShardedPhaseBytes(1000, 4), 750);
  EXPECT_EQ(ShardedPhaseBytes(1000, 1), 0);
  // A pipelined ring: equal shards move (n-1)/n of the buffer; a one-way
  // shard of 10 pieces of 100 floats takes its own size plus 2 pieces to
  // cross three links, not 3 times its size; of one piece, 3 times it.
  const std::vector<int64_t> even = {250, 250, 250, 250};
  const std::vector<int64_t> one_way = {0, 1000, 0, 0};
  const std::vector<int64_t> alone = {1000};
  EXPECT_EQ(PipelinedRingCriticalBytes(even, 100), ShardedPhaseBytes(4000, 4));
  EXPECT_EQ(PipelinedRingCriticalBytes(one_way, 100), (1000 + 2 * 100) * 4);
  EXPECT_EQ(PipelinedRingCriticalBytes(one_way, 1000), 3 * 1000 * 4);
  EXPECT_EQ(PipelinedRingCriticalBytes(alone, 100), 0);
  // Uneven shards: the busiest link carries all but the smallest.
  EXPECT_EQ(PipelinedRingCriticalBytes({400, 300, 200, 100}, 50),
            (1000 - 100) * 4);
}

}  // namespace
}  // namespace ringside

// ShardedOptimizer: its pieces cover the buffer once over the ranks, in
// either plan (contiguous: one byte-balanced shard per rank in rank order;
// per unit: every unit cut evenly), and it holds optimizer state for its
// own pieces only (ZeRO stage 1's 1/N): SGD + momentum one float per
// element, Adam two.
#include "worker/strategies/sharded/sharded_optimizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace ringside {
namespace {

TEST(ShardedOptimizerTest, HoldsStateForItsOwnPiecesOnly) {
  const TensorLayout layout =
      *TensorLayout::FromShapes({{"w", {10, 7}}, {"b", {7}}});  // 77 floats
  std::vector<float> params(77), grads(77);
  for (const bool per_unit : {false, true}) {
    for (const char* type : {"sgd", "adam"}) {
      for (int n : {1, 2, 3, 4}) {
        std::vector<int> owner(77, -1);
        for (int r = 0; r < n; ++r) {
          SyncContext context;
          context.rank = r;
          context.world_size = n;
          context.layout = layout;
          context.params = absl::MakeSpan(params);
          context.grads = absl::MakeSpan(grads);
          context.optimizer.type = type;
          ShardPlan plan = per_unit
                               ? PerUnitShardPlan({{0, 70}, {70, 77}}, n)
                               : *ContiguousShardPlan(layout, n);
          absl::StatusOr<std::unique_ptr<ShardedOptimizer>> s =
              ShardedOptimizer::Create(context, /*collective=*/nullptr,
                                       std::move(plan));
          ASSERT_TRUE(s.ok()) << s.status();
          const TensorShards& shards = (*s)->shards();
          const int64_t owned = shards.owned_elements();
          // Balanced: each unit within one element of its n-th.
          EXPECT_LE(owned, per_unit ? 70 / n + 1 + 7 / n + 1 : 77 / n + 1);
          EXPECT_GE(owned, per_unit ? 70 / n + 7 / n : 77 / n);
          EXPECT_EQ(shards.pieces().size(),
                    per_unit ? (r < 7 ? 2u : 1u) : 1u)
              << type << " n=" << n << " rank " << r;
          for (const KeyRange& p : shards.pieces()) {
            for (int64_t i = p.begin; i < p.end; ++i) {
              EXPECT_EQ(owner[i], -1) << "element " << i << " owned twice";
              owner[i] = r;
            }
          }
          const int per_element = std::string(type) == "adam" ? 2 : 1;
          EXPECT_EQ((*s)->state_bytes(), owned * 4 * per_element)
              << type << " n=" << n << " rank " << r;
        }
        for (int i = 0; i < 77; ++i) ASSERT_GE(owner[i], 0) << i;
        if (!per_unit) {
          // In rank order: rank r's shard follows rank r-1's.
          EXPECT_TRUE(std::is_sorted(owner.begin(), owner.end()));
        }
      }
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

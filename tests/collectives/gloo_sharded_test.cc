// Gloo's sharded pair, ReduceScatter and AllGatherV, in Gloo's test style:
// ranks as threads over an in-memory store, closed-form answers, ranks
// {1,2,3,4} x buffer sizes x shard patterns with shards of unequal length
// and of length 0. Rank r contributes f(r, i) = r * 1000 + i, so shard
// element i sums to 1000 * n(n-1)/2 + n * i over n ranks (exact in float32
// for these sizes). Also the deadline and argument contract.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "collectives/gloo_collective.h"
#include "collectives/in_memory_store.h"
#include "tests/testing/rank_threads.h"

namespace ringside {
namespace {

using ::ringside::testing::ExpectAllOk;
using ::ringside::testing::RunRanks;

constexpr absl::Duration kOpTimeout = absl::Seconds(20);

float F(int rank, int64_t i) { return rank * 1000.0f + i; }
float SumF(int n, int64_t i) { return 1000.0f * n * (n - 1) / 2 + n * i; }

std::vector<std::unique_ptr<Collective>> MakeGroup(InMemoryStore& store,
                                                   int size) {
  GlooCollectiveOptions options;
  options.connect_timeout = absl::Seconds(20);
  std::vector<std::unique_ptr<Collective>> group(size);
  ExpectAllOk(RunRanks(size, [&](int r) -> absl::Status {
    absl::StatusOr<std::unique_ptr<Collective>> c =
        CreateGlooCollective(store, r, size, options);
    if (!c.ok()) return c.status();
    group[r] = *std::move(c);
    return absl::OkStatus();
  }));
  return group;
}

// Shard counts of `m` floats over `n` ranks:
//   "balanced": as even as possible, the first m % n one longer;
//   "ragged":   rank i gets a share in proportion to i + 1;
//   "gaps":     every other rank (from rank 1) gets nothing;
//   "one":      the last rank gets everything.
std::vector<int64_t> Counts(const std::string& pattern, int n, int64_t m) {
  std::vector<int64_t> c(n, 0);
  if (pattern == "balanced") {
    for (int i = 0; i < n; ++i) c[i] = m / n + (i < m % n ? 1 : 0);
  } else if (pattern == "ragged") {
    int64_t given = 0;
    for (int i = 0; i < n; ++i) {
      c[i] = i + 1 == n ? m - given : m * (i + 1) / (n * (n + 1) / 2);
      given += c[i];
    }
  } else if (pattern == "gaps") {
    std::vector<int> owners;
    for (int i = 0; i < n; i += 2) owners.push_back(i);
    for (size_t k = 0; k < owners.size(); ++k) {
      c[owners[k]] = m / owners.size() + (k < m % owners.size() ? 1 : 0);
    }
  } else {
    c[n - 1] = m;
  }
  return c;
}

using Param = std::tuple<int, int64_t, std::string>;  // ranks, floats, shards

class GlooShardedTest : public ::testing::TestWithParam<Param> {};

// One group per case: ReduceScatter (sum), ReduceScatter (average), then
// AllGatherV of the summed shards, which leaves every rank the full sum.
TEST_P(GlooShardedTest, ReduceScatterThenAllGatherVMatchTheClosedForm) {
  const auto& [n, m, pattern] = GetParam();
  const std::vector<int64_t> counts = Counts(pattern, n, m);
  InMemoryStore store;
  auto group = MakeGroup(store, n);
  ExpectAllOk(RunRanks(n, [&](int r) -> absl::Status {
    Collective& c = *group[r];
    const int64_t begin = ShardOffset(counts, r), end = begin + counts[r];
    std::vector<float> avg(m);
    for (int64_t i = 0; i < m; ++i) avg[i] = F(r, i);
    if (absl::Status s = c.ReduceScatter(absl::MakeSpan(avg), counts,
                                         ReduceOp::kAverage, kOpTimeout);
        !s.ok()) {
      return s;
    }
    std::vector<float> d(m);
    for (int64_t i = 0; i < m; ++i) d[i] = F(r, i);
    if (absl::Status s = c.ReduceScatter(absl::MakeSpan(d), counts,
                                         ReduceOp::kSum, kOpTimeout);
        !s.ok()) {
      return s;
    }
    for (int64_t i = begin; i < end; ++i) {
      if (d[i] != SumF(n, i)) {
        return absl::InternalError(absl::StrCat("rank ", r, " sum[", i,
                                                "] = ", d[i]));
      }
      const float want = SumF(n, i) * (1.0f / n);
      if (std::fabs(avg[i] - want) > 1e-6f * std::fabs(want)) {
        return absl::InternalError(absl::StrCat("rank ", r, " average[", i,
                                                "] = ", avg[i]));
      }
    }
    // Only this rank's shard is defined now: blank the rest.
    for (int64_t i = 0; i < m; ++i) {
      if (i < begin || i >= end) d[i] = -1.0f;
    }
    if (absl::Status s = c.AllGatherV(absl::MakeSpan(d), counts, kOpTimeout);
        !s.ok()) {
      return s;
    }
    for (int64_t i = 0; i < m; ++i) {
      if (d[i] != SumF(n, i)) {
        return absl::InternalError(absl::StrCat("rank ", r, " gathered[", i,
                                                "] = ", d[i]));
      }
    }
    return c.Barrier(kOpTimeout);
  }));
}

INSTANTIATE_TEST_SUITE_P(
    RanksSizesShards, GlooShardedTest,
    ::testing::Combine(::testing::Values(1, 2, 3, 4),
                       // 262147: a piece and 3 floats; 1310723: 5 pieces
                       // and 3 floats, so that one shard's pieces outrun
                       // ReduceScatter's window of 4 receive slots.
                       ::testing::Values(int64_t{0}, int64_t{1}, int64_t{7},
                                         int64_t{1000}, int64_t{262147},
                                         int64_t{1310723}),
                       ::testing::Values("balanced", "ragged", "gaps", "one")),
    [](const ::testing::TestParamInfo<Param>& info) {
      return absl::StrCat(std::get<0>(info.param), "ranks_",
                          std::get<1>(info.param), "floats_",
                          std::get<2>(info.param));
    });

TEST(GlooShardedTest, EvenShardCountsSplitAsEvenlyAsTheyGo) {
  EXPECT_EQ(EvenShardCounts(10, 4), (std::vector<int64_t>{3, 3, 2, 2}));
  EXPECT_EQ(EvenShardCounts(2, 3), (std::vector<int64_t>{1, 1, 0}));
  EXPECT_EQ(EvenShardCounts(7, 1), (std::vector<int64_t>{7}));
  EXPECT_EQ(ShardOffset(EvenShardCounts(10, 4), 3), 8);
}

// The rings keep 1 MiB pieces unless, with 3+ ranks, the largest shard's
// chain outlasts the busiest link: then a quarter of that shard, within
// [64 KiB, 1 MiB] (the closed-form cases above run those pieces).
TEST(GlooShardedTest, RingPieceShrinksOnlyForAChainThatOutlastsTheLink) {
  using V = std::vector<int64_t>;
  EXPECT_EQ(RingPieceFloats(V{0, 1000000}), kRingPieceFloats);  // 2 ranks
  EXPECT_EQ(RingPieceFloats(V{250000, 250000, 250000, 250000}),
            kRingPieceFloats);  // equal shards
  EXPECT_EQ(RingPieceFloats(V{0, 1000000, 0, 0}), 250000);
  EXPECT_EQ(RingPieceFloats(V{0, 1000, 0, 0}), kMinRingPieceFloats);
  EXPECT_EQ(RingPieceFloats(V{0, 4000000, 0, 0}), kRingPieceFloats);
  EXPECT_EQ(RingPieceFloats(V{500, 0, 500, 0}), kMinRingPieceFloats);
  EXPECT_EQ(RingPieceFloats(V{}), kRingPieceFloats);
}

TEST(GlooShardedTest, BadShardCountsAreRefusedNamingThem) {
  InMemoryStore store;
  auto group = MakeGroup(store, 2);
  std::vector<float> d(10);
  struct Case {
    std::vector<int64_t> counts;
    const char* says;
  };
  for (const Case& k : {Case{{10}, "1 shard counts for 2 ranks"},
                        Case{{4, 5}, "sum to 9, the buffer has 10"},
                        Case{{11, -1}, "shard 1 has a negative count"}}) {
    absl::Status s = group[0]->ReduceScatter(absl::MakeSpan(d), k.counts,
                                             ReduceOp::kSum, kOpTimeout);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find(k.says), std::string::npos) << s;
    EXPECT_NE(s.message().find("ReduceScatter"), std::string::npos) << s;
    s = group[0]->AllGatherV(absl::MakeSpan(d), k.counts, kOpTimeout);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find("AllGatherV"), std::string::npos) << s;
  }
  // Bad arguments leave the group usable.
  ExpectAllOk(RunRanks(2, [&](int r) { return group[r]->Barrier(kOpTimeout); }));
}

TEST(GlooShardedTest, RankThatSkipsReduceScatterTimesOutThePeer) {
  InMemoryStore store;
  auto group = MakeGroup(store, 2);
  std::vector<float> d(16, 1.0f);
  const absl::Time start = absl::Now();
  // Rank 1 never calls ReduceScatter.
  absl::Status s = group[0]->ReduceScatter(
      absl::MakeSpan(d), std::vector<int64_t>{8, 8}, ReduceOp::kSum,
      absl::Milliseconds(500));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_NE(s.message().find("ReduceScatter"), std::string::npos) << s;
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  EXPECT_EQ(group[0]->AllGatherV(absl::MakeSpan(d), std::vector<int64_t>{8, 8},
                                 kOpTimeout)
                .code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(GlooShardedTest, RankThatSkipsAllGatherVTimesOutThePeer) {
  InMemoryStore store;
  auto group = MakeGroup(store, 2);
  std::vector<float> d(16, 1.0f);
  absl::Status s = group[0]->AllGatherV(
      absl::MakeSpan(d), std::vector<int64_t>{3, 13}, absl::Milliseconds(500));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_NE(s.message().find("AllGatherV"), std::string::npos) << s;
}

}  // namespace
}  // namespace ringside

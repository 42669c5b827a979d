// Gloo backend, in Gloo's own test style: N ranks as threads in one process
// meeting over an in-memory store (once over the gRPC store), checking
// closed-form answers, parameterized over ranks x sizes x algorithm. Rank r
// contributes f(r, i) = r * 1000 + i, so the sum over n ranks is
// 1000 * n(n-1)/2 + n * i (exact in float32 for these sizes).
#include "collectives/gloo_collective.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "collectives/grpc_store.h"
#include "collectives/in_memory_store.h"
#include "collectives/store_service.h"
#include "tests/testing/rank_threads.h"

namespace ringside {
namespace {

using ::ringside::testing::ExpectAllOk;
using ::ringside::testing::RunRanks;

constexpr absl::Duration kOpTimeout = absl::Seconds(20);

float F(int rank, size_t i) { return rank * 1000.0f + i; }
float SumF(int n, size_t i) { return 1000.0f * n * (n - 1) / 2 + n * i; }

// Connects a `size`-rank group; stores[r] is rank r's view of the store.
std::vector<std::unique_ptr<Collective>> MakeGroup(
    const std::vector<Store*>& stores, const GlooCollectiveOptions& options) {
  const int size = stores.size();
  std::vector<std::unique_ptr<Collective>> group(size);
  ExpectAllOk(RunRanks(size, [&](int r) -> absl::Status {
    absl::StatusOr<std::unique_ptr<Collective>> c =
        CreateGlooCollective(*stores[r], r, size, options);
    if (!c.ok()) return c.status();
    group[r] = *std::move(c);
    return absl::OkStatus();
  }));
  return group;
}

std::vector<std::unique_ptr<Collective>> MakeGroup(
    InMemoryStore& store, int size, const GlooCollectiveOptions& options) {
  return MakeGroup(std::vector<Store*>(size, &store), options);
}

GlooCollectiveOptions Options(const std::string& algorithm = "ring") {
  GlooCollectiveOptions options;
  options.algorithm = algorithm;
  options.connect_timeout = absl::Seconds(20);
  return options;
}

using Param = std::tuple<int, size_t, std::string>;  // ranks, floats, algo

class GlooCollectiveMatrixTest : public ::testing::TestWithParam<Param> {};

// One group per case runs every operation in sequence: all-reduce (sum
// and average), broadcast from the last rank, all-gather, barrier.
TEST_P(GlooCollectiveMatrixTest, EveryOperationMatchesTheClosedForm) {
  const auto& [size, n, algorithm] = GetParam();
  InMemoryStore store;
  std::vector<std::unique_ptr<Collective>> group =
      MakeGroup(store, size, Options(algorithm));
  ASSERT_EQ(group.size(), size);
  for (const auto& c : group) ASSERT_NE(c, nullptr);

  std::vector<std::vector<float>> data(size, std::vector<float>(n));
  std::vector<std::vector<float>> gathered(size, std::vector<float>(n * size));
  ExpectAllOk(RunRanks(size, [&](int r) -> absl::Status {
    Collective& c = *group[r];
    std::vector<float>& d = data[r];
    // Sum.
    for (size_t i = 0; i < n; ++i) d[i] = F(r, i);
    absl::Status s = c.AllReduce(absl::MakeSpan(d), ReduceOp::kSum, kOpTimeout);
    if (!s.ok()) return s;
    for (size_t i = 0; i < n; ++i) {
      if (d[i] != SumF(size, i)) {
        return absl::InternalError(
            absl::StrCat("sum[", i, "] = ", d[i], ", want ", SumF(size, i)));
      }
    }
    // Average.
    for (size_t i = 0; i < n; ++i) d[i] = F(r, i);
    s = c.AllReduce(absl::MakeSpan(d), ReduceOp::kAverage, kOpTimeout);
    if (!s.ok()) return s;
    for (size_t i = 0; i < n; ++i) {
      const float want = SumF(size, i) / size;
      if (std::abs(d[i] - want) > 1e-6f * std::max(1.0f, want)) {
        return absl::InternalError(
            absl::StrCat("avg[", i, "] = ", d[i], ", want ", want));
      }
    }
    // Broadcast from the last rank (non-zero when size > 1).
    const int root = size - 1;
    for (size_t i = 0; i < n; ++i) d[i] = r == root ? F(root, i) : -1.0f;
    s = c.Broadcast(absl::MakeSpan(d), root, kOpTimeout);
    if (!s.ok()) return s;
    for (size_t i = 0; i < n; ++i) {
      if (d[i] != F(root, i)) {
        return absl::InternalError(
            absl::StrCat("broadcast[", i, "] = ", d[i], ", want ", F(root, i)));
      }
    }
    // All-gather.
    for (size_t i = 0; i < n; ++i) d[i] = F(r, i);
    s = c.AllGather(d, absl::MakeSpan(gathered[r]), kOpTimeout);
    if (!s.ok()) return s;
    for (int q = 0; q < size; ++q) {
      for (size_t i = 0; i < n; ++i) {
        if (gathered[r][q * n + i] != F(q, i)) {
          return absl::InternalError(
              absl::StrCat("gathered[", q, "][", i,
                           "] = ", gathered[r][q * n + i], ", want ", F(q, i)));
        }
      }
    }
    return c.Barrier(kOpTimeout);
  }));
}

INSTANTIATE_TEST_SUITE_P(
    RanksSizesAlgorithms, GlooCollectiveMatrixTest,
    ::testing::Combine(::testing::Values(1, 2, 3, 4),
                       ::testing::Values(size_t{1}, size_t{7}, size_t{1000},
                                         size_t{262144}),
                       ::testing::Values("ring", "halving_doubling")),
    [](const ::testing::TestParamInfo<Param>& info) {
      return absl::StrCat(std::get<0>(info.param), "ranks_",
                          std::get<1>(info.param), "floats_",
                          std::get<2>(info.param));
    });

// The ring all-reduce (a reduce-scatter, then an all-gather) leaves every
// rank the same bits, back to back, on sizes the ranks do not divide, with
// sums that round (the closed form above is exact): each shard is summed at
// one rank and copied to the others.
TEST(GlooCollectiveTest, RingAllReduceGivesEveryRankTheSameBits) {
  constexpr int kSize = 3;
  InMemoryStore store;
  auto group = MakeGroup(store, kSize, Options("ring"));
  for (const auto& c : group) ASSERT_NE(c, nullptr);
  const std::vector<size_t> sizes = {2, 100003, 66560, 1059850};
  std::vector<std::vector<std::vector<float>>> data(kSize);
  ExpectAllOk(RunRanks(kSize, [&](int r) -> absl::Status {
    for (size_t n : sizes) {
      std::vector<float> d(n);
      for (size_t i = 0; i < n; ++i) d[i] = 0.1f * (r + 1) + 1e-3f * (i % 97);
      absl::Status s =
          group[r]->AllReduce(absl::MakeSpan(d), ReduceOp::kAverage, kOpTimeout);
      if (!s.ok()) return s;
      data[r].push_back(std::move(d));
    }
    return absl::OkStatus();
  }));
  for (size_t k = 0; k < sizes.size(); ++k) {
    for (int r = 1; r < kSize; ++r) {
      EXPECT_EQ(data[r][k], data[0][k]) << sizes[k] << " floats, rank " << r;
    }
    for (size_t i = 0; i < sizes[k]; i += 997) {
      EXPECT_NEAR(data[0][k][i], 0.2f + 1e-3f * (i % 97), 1e-6f);
    }
  }
}

TEST(GlooCollectiveTest, DescribesItself) {
  InMemoryStore store;
  auto group = MakeGroup(store, 1, Options());
  ASSERT_NE(group[0], nullptr);
  EXPECT_EQ(group[0]->backend(), "gloo");
  EXPECT_EQ(group[0]->rank(), 0);
  EXPECT_EQ(group[0]->size(), 1);
  EXPECT_TRUE(group[0]->Supports(Device::kCpu));
  EXPECT_FALSE(group[0]->Supports(Device::kCuda));
}

TEST(GlooCollectiveTest, RejectsBadArguments) {
  InMemoryStore store;
  EXPECT_EQ(CreateGlooCollective(store, 2, 2, Options()).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::Status s = CreateGlooCollective(store, 0, 1, Options("tree")).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("tree"), std::string::npos) << s;
  GlooCollectiveOptions no_timeout = Options();
  no_timeout.connect_timeout = absl::ZeroDuration();
  EXPECT_EQ(CreateGlooCollective(store, 0, 1, no_timeout).status().code(),
            absl::StatusCode::kInvalidArgument);

  auto group = MakeGroup(store, 1, Options());
  ASSERT_NE(group[0], nullptr);
  std::vector<float> in(4), out(5);
  EXPECT_EQ(group[0]->AllGather(in, absl::MakeSpan(out), kOpTimeout).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(group[0]->Broadcast(absl::MakeSpan(in), 1, kOpTimeout).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      group[0]
          ->AllReduce(absl::MakeSpan(in), ReduceOp::kSum, absl::ZeroDuration())
          .code(),
      absl::StatusCode::kInvalidArgument);
}

TEST(GlooCollectiveTest, BindsByInterfaceName) {
  InMemoryStore store;
  GlooCollectiveOptions options = Options();
  options.interface = "lo";
  auto group = MakeGroup(store, 2, options);
  ASSERT_NE(group[0], nullptr);
  ExpectAllOk(
      RunRanks(2, [&](int r) { return group[r]->Barrier(kOpTimeout); }));
}

TEST(GlooCollectiveTest, UnbindableHostIsUnavailable) {
  InMemoryStore store;
  GlooCollectiveOptions options = Options();
  options.host = "192.0.2.1";  // TEST-NET-1: not an address of this host
  absl::Status s = CreateGlooCollective(store, 0, 2, options).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_NE(s.message().find("192.0.2.1"), std::string::npos) << s;
}

TEST(GlooCollectiveTest, MissingRankTimesOutNamingIt) {
  InMemoryStore store;
  GlooCollectiveOptions options = Options();
  options.connect_timeout = absl::Seconds(2);
  const int size = 4;
  const absl::Time start = absl::Now();
  // Rank 2 never shows up.
  std::vector<absl::Status> status = RunRanks(3, [&](int i) {
    const int rank = i < 2 ? i : 3;
    return CreateGlooCollective(store, rank, size, options).status();
  });
  const absl::Duration took = absl::Now() - start;
  for (const absl::Status& s : status) {
    EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
    EXPECT_NE(s.message().find("rank(s) [2] of 4 did not join"),
              std::string::npos)
        << s;
  }
  EXPECT_GE(took, absl::Milliseconds(1900));
  EXPECT_LT(took, absl::Seconds(4));
}

TEST(GlooCollectiveTest, RankThatJoinsButNeverConnectsIsNamed) {
  InMemoryStore store;
  GlooCollectiveOptions options = Options();
  options.connect_timeout = absl::Seconds(2);
  // Rank 1 announces itself, then dies before Gloo's address exchange.
  ASSERT_TRUE(store.Set("gloo/joined/1", "1").ok());
  const absl::Time start = absl::Now();
  std::vector<absl::Status> status = RunRanks(2, [&](int i) {
    return CreateGlooCollective(store, i == 0 ? 0 : 2, 3, options).status();
  });
  for (const absl::Status& s : status) {
    EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
    EXPECT_NE(s.message().find("rank(s) [1] joined but did not publish"),
              std::string::npos)
        << s;
  }
  EXPECT_LT(absl::Now() - start, absl::Seconds(4));
}

TEST(GlooCollectiveTest, RankThatSkipsAnOperationTimesOutThePeer) {
  InMemoryStore store;
  auto group = MakeGroup(store, 2, Options());
  ASSERT_NE(group[0], nullptr);
  ASSERT_NE(group[1], nullptr);
  std::vector<float> d(16, 1.0f);
  // Rank 1 never calls AllReduce.
  const absl::Time start = absl::Now();
  absl::Status s = group[0]->AllReduce(absl::MakeSpan(d), ReduceOp::kSum,
                                       absl::Milliseconds(500));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_NE(s.message().find("AllReduce"), std::string::npos) << s;
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  // The group is unusable afterwards.
  EXPECT_EQ(group[0]->Barrier(kOpTimeout).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(GlooCollectiveTest, GroupsWithDistinctPrefixesShareAStore) {
  InMemoryStore store;
  GlooCollectiveOptions a = Options();
  a.store_prefix = "a";
  GlooCollectiveOptions b = Options("halving_doubling");
  b.store_prefix = "b";
  auto group_a = MakeGroup(store, 2, a);
  auto group_b = MakeGroup(store, 3, b);
  ExpectAllOk(RunRanks(3, [&](int r) -> absl::Status {
    std::vector<float> d(5, r + 1.0f);
    absl::Status s =
        group_b[r]->AllReduce(absl::MakeSpan(d), ReduceOp::kSum, kOpTimeout);
    if (s.ok() && d[4] != 6.0f) s = absl::InternalError("wrong sum in b");
    return s;
  }));
  ExpectAllOk(
      RunRanks(2, [&](int r) { return group_a[r]->Barrier(kOpTimeout); }));
}

TEST(GlooCollectiveTest, RendezvousOverTheGrpcStore) {
  StoreServerOptions server_options;
  server_options.host = "127.0.0.1";
  auto server = StoreServer::Start(server_options);
  ASSERT_TRUE(server.ok()) << server.status();
  const int size = 3;
  std::vector<std::unique_ptr<GrpcStore>> clients;
  std::vector<Store*> stores;
  for (int r = 0; r < size; ++r) {
    auto client = GrpcStore::Connect({"127.0.0.1", (*server)->port()},
                                     GrpcStoreOptions{});
    ASSERT_TRUE(client.ok()) << client.status();
    clients.push_back(*std::move(client));
    stores.push_back(clients.back().get());
  }
  auto group = MakeGroup(stores, Options());
  const size_t n = 1000;
  ExpectAllOk(RunRanks(size, [&](int r) -> absl::Status {
    std::vector<float> d(n);
    for (size_t i = 0; i < n; ++i) d[i] = F(r, i);
    absl::Status s =
        group[r]->AllReduce(absl::MakeSpan(d), ReduceOp::kSum, kOpTimeout);
    if (!s.ok()) return s;
    for (size_t i = 0; i < n; ++i) {
      if (d[i] != SumF(size, i)) return absl::InternalError("wrong sum");
    }
    return absl::OkStatus();
  }));
}

}  // namespace
}  // namespace ringside

// NCCL backend, in the Gloo test's style: N ranks as threads in one process,
// one GPU each (up to the machine's device count), meeting over an
// in-memory store and checking closed-form answers, over ranks x sizes.
// Rank r contributes F(r, i) = r * 1000 + i % 4096, so the sum over n ranks
// is 1000 * n(n-1)/2 + n * (i % 4096), exact in float32.
//
// Where NCCL cannot run the GPU tests skip and say why: "built without
// --config=cuda" in the default build, "no GPU here: <the CUDA runtime's
// message>" on a machine without a GPU or driver, "needs N GPUs" when the
// machine has fewer. The checks that need no GPU run everywhere.
#include "collectives/nccl_collective.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "collectives/in_memory_store.h"
#include "common/status_macros.h"
#include "device/device_buffer.h"
#include "tests/testing/gpu_skip.h"
#include "tests/testing/rank_threads.h"

namespace ringside {
namespace {

using ::ringside::testing::ExpectAllOk;
using ::ringside::testing::RunRanks;

constexpr absl::Duration kOpTimeout = absl::Seconds(60);

float F(int rank, size_t i) { return rank * 1000.0f + i % 4096; }
float SumF(int n, size_t i) {
  return 1000.0f * n * (n - 1) / 2 + n * (i % 4096);
}

NcclCollectiveOptions Options() {
  NcclCollectiveOptions options;
  options.connect_timeout = absl::Seconds(60);
  return options;
}

// Connects a `size`-rank group, one thread per rank; rank r gets GPU r
// (device -1: local rank r on this host).
std::vector<std::unique_ptr<Collective>> MakeGroup(
    InMemoryStore& store, int size, const NcclCollectiveOptions& options) {
  std::vector<std::unique_ptr<Collective>> group(size);
  ExpectAllOk(RunRanks(size, [&](int r) -> absl::Status {
    absl::StatusOr<std::unique_ptr<Collective>> c =
        CreateNcclCollective(store, r, size, options);
    if (!c.ok()) return c.status();
    group[r] = *std::move(c);
    return absl::OkStatus();
  }));
  return group;
}

// The GPU tests: skip unless NCCL can run here.
class NcclGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_GPU();
    gpus_ = *CudaDeviceCount();
  }
  int gpus_ = 0;
};

using Param = std::tuple<int, size_t>;  // ranks, floats

class NcclCollectiveMatrixTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_GPUS(std::get<0>(GetParam()));
  }
};

absl::Status CheckEqual(absl::string_view what, const std::vector<float>& got,
                        const std::function<float(size_t)>& want,
                        float relative_tolerance = 0.0f) {
  for (size_t i = 0; i < got.size(); ++i) {
    const float w = want(i);
    if (std::abs(got[i] - w) > relative_tolerance * std::max(1.0f, w)) {
      return absl::InternalError(
          absl::StrCat(what, "[", i, "] = ", got[i], ", want ", w));
    }
  }
  return absl::OkStatus();
}

// One group per case runs every operation in sequence: all-reduce (sum and
// average), broadcast from the last rank, all-gather (out of place and in
// place), reduce-scatter and all-gather-v over uneven and even shards,
// barrier.
TEST_P(NcclCollectiveMatrixTest, EveryOperationMatchesTheClosedForm) {
  const auto& [size, n] = GetParam();
  InMemoryStore store;
  std::vector<std::unique_ptr<Collective>> group =
      MakeGroup(store, size, Options());
  for (const auto& c : group) ASSERT_NE(c, nullptr);

  ExpectAllOk(RunRanks(size, [&](int r) -> absl::Status {
    Collective& c = *group[r];
    absl::StatusOr<DeviceBuffer> data = DeviceBuffer::Create(r, n);
    if (!data.ok()) return data.status();
    absl::StatusOr<DeviceBuffer> gathered = DeviceBuffer::Create(r, n * size);
    if (!gathered.ok()) return gathered.status();
    std::vector<float> mine(n);
    for (size_t i = 0; i < n; ++i) mine[i] = F(r, i);
    auto want_gathered = [&](size_t j) { return F(j / n, j % n); };

    // Sum.
    RS_RETURN_IF_ERROR(data->CopyFromHost(mine));
    RS_RETURN_IF_ERROR(c.AllReduce(data->span(), ReduceOp::kSum, kOpTimeout));
    absl::StatusOr<std::vector<float>> got = data->ToHost();
    if (!got.ok()) return got.status();
    RS_RETURN_IF_ERROR(
        CheckEqual("sum", *got, [&](size_t i) { return SumF(size, i); }));
    // Average (NCCL's ncclAvg may scale before summing: not bit-exact).
    RS_RETURN_IF_ERROR(data->CopyFromHost(mine));
    RS_RETURN_IF_ERROR(
        c.AllReduce(data->span(), ReduceOp::kAverage, kOpTimeout));
    got = data->ToHost();
    if (!got.ok()) return got.status();
    RS_RETURN_IF_ERROR(CheckEqual(
        "avg", *got, [&](size_t i) { return SumF(size, i) / size; }, 1e-5f));
    // Broadcast from the last rank (non-zero when size > 1).
    const int root = size - 1;
    std::vector<float> before(n, -1.0f);
    if (r == root) before = mine;
    RS_RETURN_IF_ERROR(data->CopyFromHost(before));
    RS_RETURN_IF_ERROR(c.Broadcast(data->span(), root, kOpTimeout));
    got = data->ToHost();
    if (!got.ok()) return got.status();
    RS_RETURN_IF_ERROR(
        CheckEqual("broadcast", *got, [&](size_t i) { return F(root, i); }));
    // All-gather, out of place.
    RS_RETURN_IF_ERROR(data->CopyFromHost(mine));
    RS_RETURN_IF_ERROR(c.AllGather(data->span(), gathered->span(), kOpTimeout));
    got = gathered->ToHost();
    if (!got.ok()) return got.status();
    RS_RETURN_IF_ERROR(CheckEqual("gathered", *got, want_gathered));
    // All-gather in place: `in` is this rank's slice of `out`.
    std::vector<float> slice_only(n * size, -1.0f);
    std::copy(mine.begin(), mine.end(), slice_only.begin() + r * n);
    RS_RETURN_IF_ERROR(gathered->CopyFromHost(slice_only));
    RS_RETURN_IF_ERROR(c.AllGather(gathered->span().subspan(r * n, n),
                                   gathered->span(), kOpTimeout));
    got = gathered->ToHost();
    if (!got.ok()) return got.status();
    RS_RETURN_IF_ERROR(CheckEqual("gathered in place", *got, want_gathered));
    // The sharded pair: uneven shards (rank 0's empty when size > 1: one
    // ncclReduce / ncclBroadcast per shard) and equal-as-possible ones
    // (NCCL's own reduce-scatter and all-gather when n divides evenly).
    for (const bool uneven : {true, false}) {
      std::vector<int64_t> counts(size, static_cast<int64_t>(n / size));
      if (uneven && size > 1) counts[0] = 0;
      int64_t given = 0;
      for (int64_t k : counts) given += k;
      counts[size - 1] += static_cast<int64_t>(n) - given;
      const int64_t begin = ShardOffset(counts, r), end = begin + counts[r];
      RS_RETURN_IF_ERROR(data->CopyFromHost(mine));
      RS_RETURN_IF_ERROR(
          c.ReduceScatter(data->span(), counts, ReduceOp::kSum, kOpTimeout));
      got = data->ToHost();
      if (!got.ok()) return got.status();
      std::vector<float> shard_only(n, -1.0f);
      for (int64_t i = begin; i < end; ++i) shard_only[i] = (*got)[i];
      RS_RETURN_IF_ERROR(CheckEqual(
          "reduce-scattered", std::vector<float>(got->begin() + begin,
                                                  got->begin() + end),
          [&](size_t i) { return SumF(size, begin + i); }));
      RS_RETURN_IF_ERROR(data->CopyFromHost(shard_only));
      RS_RETURN_IF_ERROR(c.AllGatherV(data->span(), counts, kOpTimeout));
      got = data->ToHost();
      if (!got.ok()) return got.status();
      RS_RETURN_IF_ERROR(CheckEqual("all-gathered shards", *got,
                                    [&](size_t i) { return SumF(size, i); }));
    }
    return c.Barrier(kOpTimeout);
  }));
  // Each rank releases its communicator on its own thread, as a process
  // would.
  ExpectAllOk(RunRanks(size, [&](int r) {
    group[r].reset();
    return absl::OkStatus();
  }));
}

INSTANTIATE_TEST_SUITE_P(
    RanksSizes, NcclCollectiveMatrixTest,
    ::testing::Combine(::testing::Values(1, 2, 3, 4, 8),
                       ::testing::Values(size_t{1}, size_t{7}, size_t{1000},
                                         size_t{262144}, size_t{4194304})),
    [](const ::testing::TestParamInfo<Param>& info) {
      return absl::StrCat(std::get<0>(info.param), "ranks_",
                          std::get<1>(info.param), "floats");
    });

TEST_F(NcclGpuTest, DescribesItselfAndTakesDeviceMemoryOnly) {
  InMemoryStore store;
  auto group = MakeGroup(store, 1, Options());
  ASSERT_NE(group[0], nullptr);
  Collective& c = *group[0];
  EXPECT_EQ(c.backend(), "nccl");
  EXPECT_EQ(c.rank(), 0);
  EXPECT_EQ(c.size(), 1);
  EXPECT_TRUE(c.Supports(Device::kCuda));
  EXPECT_FALSE(c.Supports(Device::kCpu));

  std::vector<float> host(4, 1.0f);
  absl::Status s =
      c.AllReduce(absl::MakeSpan(host), ReduceOp::kSum, kOpTimeout);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("host memory"), std::string::npos) << s;

  absl::StatusOr<DeviceBuffer> in = DeviceBuffer::Create(0, 4);
  absl::StatusOr<DeviceBuffer> out = DeviceBuffer::Create(0, 5);
  ASSERT_TRUE(in.ok()) << in.status();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(c.AllGather(in->span(), out->span(), kOpTimeout).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(c.Broadcast(in->span(), 1, kOpTimeout).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      c.AllReduce(in->span(), ReduceOp::kSum, absl::ZeroDuration()).code(),
      absl::StatusCode::kInvalidArgument);
  // Rejected arguments leave the group usable.
  EXPECT_TRUE(c.Barrier(kOpTimeout).ok());
}

TEST_F(NcclGpuTest, MoreRanksThanGpusIsFailedPrecondition) {
  InMemoryStore store;
  const int size = gpus_ + 1;
  const std::string want =
      absl::StrCat("NCCL needs a distinct GPU per rank: ", size, " ranks, ",
                   gpus_, gpus_ == 1 ? " GPU" : " GPUs");
  for (const absl::Status& s : RunRanks(size, [&](int r) {
         return CreateNcclCollective(store, r, size, Options()).status();
       })) {
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_NE(s.message().find(want), std::string::npos) << s;
  }
}

TEST_F(NcclGpuTest, MissingRankZeroTimesOutNamingIt) {
  InMemoryStore store;
  NcclCollectiveOptions options = Options();
  options.connect_timeout = absl::Seconds(2);
  const absl::Time start = absl::Now();
  // Rank 0 of 2 never shows up.
  absl::Status s = CreateNcclCollective(store, 1, 2, options).status();
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_NE(s.message().find("rank(s) [0] of 2 did not join"),
            std::string::npos)
      << s;
  EXPECT_GE(took, absl::Milliseconds(1900));
  EXPECT_LT(took, absl::Seconds(5));
}

TEST_F(NcclGpuTest, RankThatSkipsAnOperationTimesOutThePeer) {
  if (gpus_ < 2) GTEST_SKIP() << "needs 2 GPUs, this machine has " << gpus_;
  InMemoryStore store;
  auto group = MakeGroup(store, 2, Options());
  ASSERT_NE(group[0], nullptr);
  ASSERT_NE(group[1], nullptr);
  absl::StatusOr<DeviceBuffer> d = DeviceBuffer::Create(0, 16);
  ASSERT_TRUE(d.ok()) << d.status();
  // Rank 1 never calls AllReduce.
  const absl::Time start = absl::Now();
  absl::Status s =
      group[0]->AllReduce(d->span(), ReduceOp::kSum, absl::Milliseconds(500));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_NE(s.message().find("AllReduce"), std::string::npos) << s;
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  // The group is unusable afterwards.
  EXPECT_EQ(group[0]->Barrier(kOpTimeout).code(),
            absl::StatusCode::kFailedPrecondition);
}

// Runs everywhere: without NCCL, creation fails at once and says why.
TEST(NcclCollectiveTest, WithoutAGpuCreationSaysWhy) {
  absl::StatusOr<int> gpus = CudaDeviceCount();
  if (gpus.ok()) GTEST_SKIP() << "this machine has " << *gpus << " GPU(s)";
  EXPECT_TRUE(gpus.status().code() == absl::StatusCode::kUnimplemented ||
              gpus.status().code() == absl::StatusCode::kUnavailable)
      << gpus.status();
  InMemoryStore store;
  const absl::Time start = absl::Now();
  absl::Status s = CreateNcclCollective(store, 0, 2, Options()).status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(s.code(), gpus.status().code()) << s;
  if (s.code() == absl::StatusCode::kUnimplemented) {
    EXPECT_NE(s.message().find("built without --config=cuda"),
              std::string::npos)
        << s;
  } else {
    EXPECT_NE(s.message().find("no GPU here: "), std::string::npos) << s;
  }
}

// Runs with --config=cuda, GPU or not (options are checked first).
TEST(NcclCollectiveTest, RejectsBadArguments) {
  SKIP_WITHOUT_CUDA_BUILD();
  InMemoryStore store;
  EXPECT_EQ(CreateNcclCollective(store, 2, 2, Options()).status().code(),
            absl::StatusCode::kInvalidArgument);
  NcclCollectiveOptions bad = Options();
  bad.connect_timeout = absl::ZeroDuration();
  EXPECT_EQ(CreateNcclCollective(store, 0, 1, bad).status().code(),
            absl::StatusCode::kInvalidArgument);
  bad = Options();
  bad.device = -2;
  EXPECT_EQ(CreateNcclCollective(store, 0, 1, bad).status().code(),
            absl::StatusCode::kInvalidArgument);
  bad = Options();
  bad.store_prefix = "";
  EXPECT_EQ(CreateNcclCollective(store, 0, 1, bad).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ringside

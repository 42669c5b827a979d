// ParamShard: BSP aggregation and every bad-input case; a rejected call
// leaves the shard unchanged.
#include "server/param_shard.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ringside {
namespace {

std::string Bytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}

TensorLayout TwoTensors() {
  return *TensorLayout::FromShapes({{"w", {2, 3}}, {"b", {4}}});  // 10 floats
}

Registration MakeRegistration(int rank, int world_size) {
  Registration r;
  r.rank = rank;
  r.world_size = world_size;
  r.layout = TwoTensors();
  r.optimizer.type = "sgd";
  r.optimizer.lr = 0.5f;
  r.optimizer.momentum = 0.0f;
  r.chunk_bytes = 16;  // 4 floats: chunks [0,4) [4,8) [8,10)
  r.num_shards = 1;
  r.partitioner = "even_bytes";
  return r;
}

class ParamShardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ParamShardOptions options;
    options.num_workers = 2;
    shard_ = std::make_unique<ParamShard>(options);
    ASSERT_TRUE(shard_->Register(MakeRegistration(0, 2)).ok());
    ASSERT_TRUE(shard_->Register(MakeRegistration(1, 2)).ok());
    for (int64_t off : {0, 4}) {
      ASSERT_TRUE(
          shard_->PushInit(0, off, "float32", Bytes({1, 1, 1, 1})).ok());
    }
    ASSERT_TRUE(shard_->PushInit(0, 8, "float32", Bytes({1, 1})).ok());
  }

  // Pulls every chunk of `version` into a flat vector.
  std::vector<float> PullAll(int64_t version) {
    std::vector<float> out(10, -99);
    absl::StatusOr<ParamShard::PullCursor> cursor =
        shard_->StartPull(0, version);
    EXPECT_TRUE(cursor.ok()) << cursor.status();
    while (cursor.ok() && cursor->remaining > 0) {
      int64_t offset;
      std::string data;
      absl::Status s = shard_->NextReadyChunk(
          &*cursor, absl::Now() + absl::Seconds(2), &offset, &data);
      EXPECT_TRUE(s.ok()) << s;
      if (!s.ok()) break;
      std::memcpy(out.data() + offset, data.data(), data.size());
    }
    return out;
  }

  std::unique_ptr<ParamShard> shard_;
};

TEST_F(ParamShardTest, AveragesAllWorkersThenSteps) {
  EXPECT_EQ(PullAll(0), std::vector<float>(10, 1.0f));
  ASSERT_TRUE(
      shard_->PushGradient(0, 0, 0, "float32", Bytes({2, 2, 2, 2})).ok());
  EXPECT_EQ(shard_->MinVersion(), 0);
  ASSERT_TRUE(
      shard_->PushGradient(1, 0, 0, "float32", Bytes({4, 0, 0, 0})).ok());
  // Chunk [0,4) is done: p = 1 - 0.5 * mean(g).
  for (int64_t off : {4}) {
    ASSERT_TRUE(
        shard_->PushGradient(0, 0, off, "float32", Bytes({0, 0, 0, 0})).ok());
    ASSERT_TRUE(
        shard_->PushGradient(1, 0, off, "float32", Bytes({0, 0, 0, 2})).ok());
  }
  ASSERT_TRUE(shard_->PushGradient(0, 0, 8, "float32", Bytes({1, 1})).ok());
  ASSERT_TRUE(shard_->PushGradient(1, 0, 8, "float32", Bytes({1, 1})).ok());
  EXPECT_EQ(shard_->MinVersion(), 1);
  const std::vector<float> want = {-0.5f, 0.5f, 0.5f, 0.5f, 1,
                                   1,     1,    0.5f, 0.5f, 0.5f};
  EXPECT_EQ(PullAll(1), want);
}

TEST_F(ParamShardTest, EarlyChunksAreServedBeforeLateOnesArePushed) {
  ASSERT_TRUE(
      shard_->PushGradient(0, 0, 0, "float32", Bytes({0, 0, 0, 0})).ok());
  ASSERT_TRUE(
      shard_->PushGradient(1, 0, 0, "float32", Bytes({0, 0, 0, 0})).ok());
  absl::StatusOr<ParamShard::PullCursor> cursor = shard_->StartPull(0, 1);
  ASSERT_TRUE(cursor.ok());
  int64_t offset = -1;
  std::string data;
  ASSERT_TRUE(shard_
                  ->NextReadyChunk(&*cursor, absl::Now() + absl::Seconds(1),
                                   &offset, &data)
                  .ok());
  EXPECT_EQ(offset, 0);
  // The next one is not ready: the deadline error names the missing ranks.
  absl::Status s = shard_->NextReadyChunk(
      &*cursor, absl::Now() + absl::Milliseconds(50), &offset, &data);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(s.message().find("ranks [0,1]"), std::string::npos) << s;
}

// Every bad push is rejected with a message naming the problem, and the
// state is unchanged: a full valid step afterwards gives the same result
// as without the bad push.
struct BadPush {
  const char* name;
  int rank;
  int64_t step;
  int64_t offset;
  const char* dtype;
  std::vector<float> data;
  absl::StatusCode code;
  const char* message;
};

class ParamShardBadPushTest : public ParamShardTest,
                              public ::testing::WithParamInterface<BadPush> {};

TEST_P(ParamShardBadPushTest, RejectedAndStateUnchanged) {
  const BadPush& bad = GetParam();
  absl::Status s = shard_->PushGradient(bad.rank, bad.step, bad.offset,
                                        bad.dtype, Bytes(bad.data));
  EXPECT_EQ(s.code(), bad.code) << s;
  EXPECT_NE(s.message().find(bad.message), std::string::npos) << s;
  EXPECT_EQ(shard_->MinVersion(), 0);
  EXPECT_EQ(PullAll(0), std::vector<float>(10, 1.0f));
  for (int r = 0; r < 2; ++r) {
    for (int64_t off : {0, 4}) {
      ASSERT_TRUE(
          shard_->PushGradient(r, 0, off, "float32", Bytes({2, 2, 2, 2})).ok());
    }
    ASSERT_TRUE(shard_->PushGradient(r, 0, 8, "float32", Bytes({2, 2})).ok());
  }
  EXPECT_EQ(PullAll(1), std::vector<float>(10, 0.0f));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParamShardBadPushTest,
    ::testing::Values(BadPush{"WrongSize",
                              0,
                              0,
                              0,
                              "float32",
                              {1, 2, 3},
                              absl::StatusCode::kInvalidArgument,
                              "expected 16"},
                      BadPush{"WrongDtype",
                              0,
                              0,
                              0,
                              "float16",
                              {1, 2, 3, 4},
                              absl::StatusCode::kInvalidArgument,
                              "dtype 'float16'"},
                      BadPush{"FutureStep",
                              0,
                              3,
                              0,
                              "float32",
                              {1, 2, 3, 4},
                              absl::StatusCode::kFailedPrecondition,
                              "future step 3"},
                      BadPush{"StaleStep",
                              0,
                              -1,
                              0,
                              "float32",
                              {1, 2, 3, 4},
                              absl::StatusCode::kFailedPrecondition,
                              "stale step -1"},
                      BadPush{"UnknownRank",
                              7,
                              0,
                              0,
                              "float32",
                              {1, 2, 3, 4},
                              absl::StatusCode::kInvalidArgument,
                              "unknown rank 7"},
                      BadPush{"NotAChunkStart",
                              0,
                              0,
                              2,
                              "float32",
                              {1, 2, 3, 4},
                              absl::StatusCode::kInvalidArgument,
                              "not a chunk start"},
                      BadPush{"OutOfRange",
                              0,
                              0,
                              10,
                              "float32",
                              {1, 2, 3, 4},
                              absl::StatusCode::kInvalidArgument,
                              "not a chunk start"}),
    [](const ::testing::TestParamInfo<BadPush>& info) {
      return std::string(info.param.name);
    });

TEST_F(ParamShardTest, SecondPushForTheSameStepIsRejected) {
  ASSERT_TRUE(
      shard_->PushGradient(0, 0, 0, "float32", Bytes({2, 2, 2, 2})).ok());
  absl::Status s =
      shard_->PushGradient(0, 0, 0, "float32", Bytes({9, 9, 9, 9}));
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists) << s;
  ASSERT_TRUE(
      shard_->PushGradient(1, 0, 0, "float32", Bytes({2, 2, 2, 2})).ok());
  std::vector<float> p = shard_->Parameters();
  EXPECT_FLOAT_EQ(p[0], 0.0f);  // 1 - 0.5 * 2: the 9s were not added
}

TEST(ParamShardRegisterTest, RejectsMismatchedWorkers) {
  ParamShardOptions options;
  options.num_workers = 2;
  ParamShard shard(options);
  ASSERT_TRUE(shard.Register(MakeRegistration(0, 2)).ok());

  Registration other_layout = MakeRegistration(1, 2);
  other_layout.layout = *TensorLayout::FromShapes({{"w", {3, 3}}});
  absl::Status s = shard.Register(other_layout).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("layout differs"), std::string::npos) << s;

  Registration other_lr = MakeRegistration(1, 2);
  other_lr.optimizer.lr = 0.1f;
  s = shard.Register(other_lr).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("optimizer config"), std::string::npos) << s;

  s = shard.Register(MakeRegistration(1, 3)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("--num_workers=2"), std::string::npos) << s;

  s = shard.Register(MakeRegistration(5, 2)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);

  s = shard.Register(MakeRegistration(0, 2)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists);

  EXPECT_TRUE(shard.Register(MakeRegistration(1, 2)).ok());
}

// Registrations that would bind the server to a useless job are refused,
// leaving it free for the real one.
TEST(ParamShardRegisterTest, RefusesEmptyLayoutsAndHugeChunks) {
  ParamShardOptions options;
  options.num_workers = 2;
  ParamShard shard(options);
  Registration empty = MakeRegistration(0, 2);
  empty.layout = TensorLayout();
  absl::Status s = shard.Register(empty).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("no tensors"), std::string::npos) << s;
  Registration huge_chunks = MakeRegistration(0, 2);
  huge_chunks.chunk_bytes = int64_t{1} << 62;
  s = shard.Register(huge_chunks).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("chunk_bytes"), std::string::npos) << s;
  EXPECT_EQ(shard.CheckRank(-4).code(), absl::StatusCode::kInvalidArgument);
  // State unchanged: the real job registers.
  EXPECT_TRUE(shard.Register(MakeRegistration(0, 2)).ok());
  EXPECT_TRUE(shard.Register(MakeRegistration(1, 2)).ok());
}

// A model too big for the server is refused, not allocated (an allocation
// failure would end the server).
TEST(ParamShardRegisterTest, RefusesAModelThatDoesNotFit) {
  ParamShardOptions options;
  options.num_workers = 2;
  ParamShard shard(options);  // limit: this machine's memory
  Registration huge = MakeRegistration(0, 2);
  huge.layout = *TensorLayout::FromShapes({{"w", {int64_t{1} << 50}}});
  absl::Status s = shard.Register(huge).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_NE(s.message().find("MiB"), std::string::npos) << s;
  EXPECT_EQ(shard.MemoryBytes(), 0);

  options.max_state_bytes = 1000;  // 10 floats x 3 buffers + 3 chunks fit
  ParamShard small(options);
  Registration bigger = MakeRegistration(0, 2);
  bigger.layout = *TensorLayout::FromShapes({{"w", {100}}});
  s = small.Register(bigger).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_TRUE(small.Register(MakeRegistration(0, 2)).ok());
}

TEST(ParamShardShardingTest, RejectsAPushForAnotherShardsRange) {
  ParamShardOptions options;
  options.num_workers = 1;
  options.shard = 1;
  options.num_shards = 2;
  ParamShard shard(options);
  Registration r = MakeRegistration(0, 1);
  r.num_shards = 2;
  absl::StatusOr<KeyRange> range = shard.Register(r);
  ASSERT_TRUE(range.ok()) << range.status();
  EXPECT_EQ(range->begin, 5);
  EXPECT_EQ(range->end, 10);
  absl::Status s = shard.PushGradient(0, 0, 0, "float32", Bytes({1, 1, 1, 1}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("[0, 5) owned by shard 0"), std::string::npos)
      << s;
}

TEST(ParamShardMemoryTest, StaysFlatInTheNumberOfWorkers) {
  int64_t bytes[2];
  for (int i = 0; i < 2; ++i) {
    ParamShardOptions options;
    options.num_workers = i == 0 ? 1 : 16;
    ParamShard shard(options);
    ASSERT_TRUE(shard.Register(MakeRegistration(0, options.num_workers)).ok());
    bytes[i] = shard.MemoryBytes();
  }
  EXPECT_EQ(bytes[0], bytes[1]);
  EXPECT_EQ(bytes[0], 10 * 4 * 2);  // params + accumulator (momentum 0)
}


// A summation job (the byteps strategy): 4 workers on 2 hosts, so ranks 0
// and 1 push each host's sum; the shard serves the plain sum, needs no
// initial parameters, starts at the workers' step and refuses what only an
// optimizing job does.
Registration SummationRegistration(int rank) {
  Registration r = MakeRegistration(rank, 4);
  r.summation = true;
  r.ranks_per_pusher = 2;
  r.start_step = 7;
  return r;
}

TEST(ParamShardSummationTest, ServesThePlainSumOfOnePushPerHost) {
  ParamShardOptions options;
  options.num_workers = 4;
  ParamShard shard(options);
  ASSERT_TRUE(shard.Register(SummationRegistration(0)).ok());
  absl::Status s = shard.Register(SummationRegistration(2)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("[0, 2)"), std::string::npos) << s;
  Registration optimizing = MakeRegistration(1, 4);
  s = shard.Register(optimizing).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("summation job"), std::string::npos) << s;
  Registration other_start = SummationRegistration(1);
  other_start.start_step = 0;
  EXPECT_EQ(shard.Register(other_start).status().code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(shard.Register(SummationRegistration(1)).ok());

  EXPECT_EQ(shard.PushInit(0, 0, "float32", Bytes({1, 1, 1, 1})).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(shard.MinVersion(), 7);
  EXPECT_EQ(shard.PushGradient(0, 6, 0, "float32", Bytes({1, 1, 1, 1})).code(),
            absl::StatusCode::kFailedPrecondition);
  for (int rank : {0, 1}) {
    const float g = rank == 0 ? 1.5f : 2.0f;
    ASSERT_TRUE(shard.PushGradient(rank, 7, 0, "float32",
                                   Bytes({g, g, g, g})).ok());
    ASSERT_TRUE(shard.PushGradient(rank, 7, 4, "float32",
                                   Bytes({g, 0, 0, -g})).ok());
    ASSERT_TRUE(shard.PushGradient(rank, 7, 8, "float32", Bytes({g, 1})).ok());
  }
  EXPECT_EQ(shard.MinVersion(), 8);
  EXPECT_EQ(shard.Parameters(),
            (std::vector<float>{3.5f, 3.5f, 3.5f, 3.5f, 3.5f, 0, 0, -3.5f,
                                3.5f, 2}));
  EXPECT_EQ(shard.MemoryBytes(), 2 * 10 * 4);  // sums and accumulator only
  const ParamShard::UpdateCounts counts = shard.Counts();
  EXPECT_EQ(counts.pushes_per_rank, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(shard.PushGradient(2, 8, 0, "float32", Bytes({1, 1, 1, 1})).code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(shard.Finish(0).ok());
  ASSERT_TRUE(shard.Finish(1).ok());
  EXPECT_TRUE(shard.WaitAllFinished(absl::Now() + absl::Seconds(1)));
}

TEST(ParamShardSummationTest, RefusesBadHostsAndAResumedServer) {
  ParamShardOptions options;
  options.num_workers = 4;
  ParamShard shard(options);
  Registration r = SummationRegistration(0);
  r.ranks_per_pusher = 3;  // does not divide 4
  absl::Status s = shard.Register(r).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("ranks_per_pusher"), std::string::npos) << s;

  ParamShard resumed(options);
  Checkpoint c;
  c.step = 3;
  ASSERT_TRUE(resumed.Resume(c).ok());
  s = resumed.Register(SummationRegistration(0)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("without --resume"), std::string::npos) << s;
}

}  // namespace
}  // namespace ringside

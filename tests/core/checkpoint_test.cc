// Checkpoints: a round trip keeps every bit; anything but an intact file of
// the right job is refused with a clear error (never half-loaded); writes
// are atomic; a ParamShard writes consistent checkpoints and resumes from
// them exactly, refusing one of another job with its state unchanged.
#include "core/checkpoint.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "proto/checkpoint.pb.h"
#include "server/param_shard.h"

namespace ringside {
namespace {

TensorLayout Layout() {
  return *TensorLayout::FromShapes({{"w", {2, 3}}, {"b", {4}}});  // 10 floats
}

Checkpoint Sample() {
  Checkpoint c;
  c.step = 12;
  c.shard = 1;
  c.num_shards = 2;
  c.pieces = {KeyRange{4, 10}};
  c.layout = Layout();
  c.optimizer.type = "adam";
  c.optimizer.lr = 0.01f;
  c.writer = "test";
  c.params = {1.5f, -2.0f, 3.25f, 0.0f, 1e-30f, -7.0f};
  for (int i = 0; i < 12; ++i) c.optimizer_state.push_back(i * 0.5f);
  return c;
}

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/" + name;
}

TEST(CheckpointTest, RoundTripKeepsEveryBit) {
  const Checkpoint c = Sample();
  absl::StatusOr<Checkpoint> back = ParseCheckpoint(SerializeCheckpoint(c));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->step, 12);
  EXPECT_EQ(back->shard, 1);
  EXPECT_EQ(back->num_shards, 2);
  EXPECT_EQ(back->pieces, c.pieces);
  EXPECT_EQ(back->layout, c.layout);
  EXPECT_TRUE(back->optimizer == c.optimizer);
  EXPECT_EQ(back->params, c.params);
  EXPECT_EQ(back->optimizer_state, c.optimizer_state);
  EXPECT_EQ(back->writer, "test");
}

TEST(CheckpointTest, EveryFlippedByteIsRefused) {
  const std::string bytes = SerializeCheckpoint(Sample());
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] ^= 0x5a;
    absl::StatusOr<Checkpoint> c = ParseCheckpoint(bad);
    ASSERT_FALSE(c.ok()) << "flipping byte " << i << " went unnoticed";
    EXPECT_EQ(c.status().code(), absl::StatusCode::kDataLoss) << c.status();
  }
}

TEST(CheckpointTest, TruncatedOrExtendedFilesAreRefused) {
  const std::string bytes = SerializeCheckpoint(Sample());
  for (size_t n : {size_t{0}, size_t{7}, size_t{20}, bytes.size() - 1}) {
    EXPECT_EQ(ParseCheckpoint(bytes.substr(0, n)).status().code(),
              absl::StatusCode::kDataLoss)
        << "truncated to " << n;
  }
  EXPECT_EQ(ParseCheckpoint(bytes + "x").status().code(),
            absl::StatusCode::kDataLoss);
  absl::Status s = ParseCheckpoint("hello, not a checkpoint file").status();
  EXPECT_NE(s.message().find("bad magic"), std::string::npos) << s;
}

TEST(CheckpointTest, HeaderThatDisagreesWithThePayloadIsRefused) {
  Checkpoint c = Sample();
  c.pieces = {KeyRange{4, 9}};  // 5 elements, but 6 parameters follow
  absl::Status s = ParseCheckpoint(SerializeCheckpoint(c)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  c = Sample();
  c.pieces = {KeyRange{8, 14}};  // past the model's 10 elements
  s = ParseCheckpoint(SerializeCheckpoint(c)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("past the model"), std::string::npos) << s;
}

// A file with a correct checksum around `header` and `payload_bytes` bytes.
std::string FileWithHeader(const proto::CheckpointHeader& header,
                           size_t payload_bytes,
                           const std::string& magic = "RSCKPT1\n") {
  const std::string h = header.SerializeAsString();
  std::string out = magic;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(h.size() >> (8 * i)));
  out += h;
  out += std::string(payload_bytes, '\0');
  const uint32_t crc = static_cast<uint32_t>(
      crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(out.data()),
            static_cast<uInt>(out.size())));
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(crc >> (8 * i)));
  return out;
}

// A tests/fuzz/checkpoint_fuzzer case: unchecked, 4 * (num_params +
// num_state) wraps around to the payload's size, and the reader then tries
// to allocate 2^62 floats (the process dies); range_end - range_begin can
// overflow.
TEST(CheckpointTest, CountsThatWouldWrapAroundAreRefused) {
  proto::CheckpointHeader header;
  header.set_step(1);
  header.set_num_shards(1);
  *header.mutable_layout() = Layout().ToProto();
  header.set_num_state(int64_t{1} << 62);  // 4 * 2^62 = 2^64 = 0 (mod 2^64)
  absl::Status s = ParseCheckpoint(FileWithHeader(header, 0)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("optimizer-state values"), std::string::npos) << s;

  header.set_num_state(0);
  header.set_num_params((int64_t{1} << 62) + 2);
  header.set_range_end((int64_t{1} << 62) + 2);
  s = ParseCheckpoint(FileWithHeader(header, 8)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;

  header.set_num_params(0);
  header.set_range_begin(1);
  header.set_range_end(std::numeric_limits<int64_t>::min());
  s = ParseCheckpoint(FileWithHeader(header, 0)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

// Format 2 holds several pieces; pieces out of order, overlapping or empty
// are refused, naming the piece.
TEST(CheckpointTest, PiecesRoundTripAndBadPiecesAreRefused) {
  Checkpoint c = Sample();
  c.pieces = {KeyRange{0, 2}, KeyRange{5, 9}};  // 6 elements
  absl::StatusOr<Checkpoint> back = ParseCheckpoint(SerializeCheckpoint(c));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->pieces, c.pieces);
  EXPECT_EQ(HeldElements(*back), 6);
  for (const std::vector<KeyRange>& bad :
       {std::vector<KeyRange>{{5, 9}, {0, 2}}, {{0, 3}, {2, 5}},
        {{0, 6}, {7, 7}}}) {
    c.pieces = bad;
    absl::Status s = ParseCheckpoint(SerializeCheckpoint(c)).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find("piece 1"), std::string::npos) << s;
  }
}

// A format-1 file (one key range in the header's range fields) is read as
// one piece; a version this build does not know is refused, naming it.
TEST(CheckpointTest, FormatOneIsReadAsOnePieceAndUnknownVersionsAreRefused) {
  proto::CheckpointHeader header;
  header.set_step(4);
  header.set_num_shards(1);
  header.set_range_begin(6);
  header.set_range_end(10);
  header.set_num_params(4);
  *header.mutable_layout() = Layout().ToProto();
  *header.mutable_optimizer() = OptimizerConfig().ToProto();
  absl::StatusOr<Checkpoint> old = ParseCheckpoint(FileWithHeader(header, 16));
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->pieces, (std::vector<KeyRange>{{6, 10}}));
  EXPECT_EQ(old->params.size(), 4u);
  absl::Status s =
      ParseCheckpoint(FileWithHeader(header, 16, "RSCKPT7\n")).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("format version 7"), std::string::npos) << s;
  // What this build writes is format 2.
  EXPECT_EQ(SerializeCheckpoint(Sample()).substr(0, 8), "RSCKPT2\n");
}

TEST(CheckpointTest, FilesAreReplacedAtomically) {
  const std::string path = TempPath("atomic.ckpt");
  Checkpoint c = Sample();
  ASSERT_TRUE(WriteCheckpointFile(path, c).ok());
  c.step = 13;
  ASSERT_TRUE(WriteCheckpointFile(path, c).ok());
  absl::StatusOr<Checkpoint> back = ReadCheckpointFile(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->step, 13);
  EXPECT_EQ(ReadCheckpointStep(path).value_or(-1), 13);  // header alone
  EXPECT_FALSE(std::ifstream(path + ".tmp").good()) << "temp file left over";
  EXPECT_EQ(ReadCheckpointFile(TempPath("missing.ckpt")).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(ReadCheckpointStep(TempPath("missing.ckpt")).status().code(),
            absl::StatusCode::kNotFound);
  // A corrupt file names itself.
  { std::ofstream(path, std::ios::binary | std::ios::trunc) << "garbage"; }
  absl::Status s = ReadCheckpointFile(path).status();
  EXPECT_NE(s.message().find(path), std::string::npos) << s;
  EXPECT_EQ(ReadCheckpointStep(path).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_FALSE(WriteCheckpointFile("/nonexistent-dir/x.ckpt", c).ok());
}

TEST(CheckpointTest, MatchingNamesTheFirstDifference) {
  const Checkpoint c = Sample();
  EXPECT_TRUE(
      CheckCheckpointMatches(c, Layout(), c.optimizer, KeyRange{4, 10}).ok());
  OptimizerConfig sgd;
  absl::Status s = CheckCheckpointMatches(c, Layout(), sgd, KeyRange{4, 10});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("optimizer"), std::string::npos) << s;
  s = CheckCheckpointMatches(c, Layout(), c.optimizer, KeyRange{0, 6});
  EXPECT_NE(s.message().find("key range"), std::string::npos) << s;
  s = CheckCheckpointMatches(c, *TensorLayout::FromShapes({{"w", {10}}}),
                             c.optimizer, KeyRange{4, 10});
  EXPECT_NE(s.message().find("layout"), std::string::npos) << s;
}

// --- ParamShard: writing and resuming ---

std::string Bytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}

Registration MakeRegistration(int rank, const TensorLayout& layout) {
  Registration r;
  r.rank = rank;
  r.world_size = 2;
  r.layout = layout;
  r.optimizer.type = "sgd";
  r.optimizer.lr = 0.5f;
  r.optimizer.momentum = 0.9f;
  r.chunk_bytes = 16;  // chunks [0,4) [4,8) [8,10)
  r.num_shards = 1;
  r.partitioner = "even_bytes";
  return r;
}

// Runs `steps` BSP steps of two workers pushing gradient g(step, rank).
void RunSteps(ParamShard& shard, int64_t first, int64_t last) {
  for (int64_t step = first; step < last; ++step) {
    for (int rank = 0; rank < 2; ++rank) {
      for (int64_t off : {0, 4, 8}) {
        const int n = off == 8 ? 2 : 4;
        std::vector<float> g(n, 0.1f * (step + 1) + rank);
        ASSERT_TRUE(
            shard.PushGradient(rank, step, off, "float32", Bytes(g)).ok());
      }
    }
  }
}

std::unique_ptr<ParamShard> FreshShard(const std::string& dir, bool init) {
  ParamShardOptions options;
  options.num_workers = 2;
  options.checkpoint_every = 2;
  options.checkpoint_dir = dir;
  auto shard = std::make_unique<ParamShard>(options);
  EXPECT_TRUE(shard->Register(MakeRegistration(0, Layout())).ok());
  EXPECT_TRUE(shard->Register(MakeRegistration(1, Layout())).ok());
  if (init) {
    std::vector<float> p = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    for (int64_t off : {0, 4, 8}) {
      const int n = off == 8 ? 2 : 4;
      EXPECT_TRUE(shard
                      ->PushInit(0, off, "float32",
                                 Bytes({p.begin() + off, p.begin() + off + n}))
                      .ok());
    }
  }
  return shard;
}

TEST(ParamShardCheckpointTest, ResumedShardEndsExactlyAsAnUninterruptedOne) {
  const std::string dir = ::testing::TempDir();
  std::unique_ptr<ParamShard> uninterrupted = FreshShard(dir + "/u", true);
  RunSteps(*uninterrupted, 0, 6);

  ::mkdir((dir + "/a").c_str(), 0755);
  std::unique_ptr<ParamShard> first = FreshShard(dir + "/a", true);
  RunSteps(*first, 0, 5);  // checkpoints after steps 2 and 4; "dies" at 5
  EXPECT_EQ(first->checkpoints_written(), 2);
  EXPECT_TRUE(first->checkpoint_error().ok());

  absl::StatusOr<Checkpoint> c =
      ReadCheckpointFile(ShardCheckpointPath(dir + "/a", 0, 1));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->step, 4);
  ParamShardOptions options;
  options.num_workers = 2;
  ParamShard resumed(options);
  ASSERT_TRUE(resumed.Resume(*c).ok());
  ASSERT_TRUE(resumed.Register(MakeRegistration(0, Layout())).ok());
  ASSERT_TRUE(resumed.Register(MakeRegistration(1, Layout())).ok());
  EXPECT_EQ(resumed.resume_step(), 4);
  EXPECT_EQ(resumed.MinVersion(), 4);
  RunSteps(resumed, 4, 6);
  // Momentum came back too: the parameters are bit-identical.
  EXPECT_EQ(resumed.Parameters(), uninterrupted->Parameters());
}

TEST(ParamShardCheckpointTest, ACheckpointOfAnotherJobIsRefusedAndNothingLoads) {
  const std::string dir = ::testing::TempDir() + "/b";
  ::mkdir(dir.c_str(), 0755);
  std::unique_ptr<ParamShard> first = FreshShard(dir, true);
  RunSteps(*first, 0, 2);
  absl::StatusOr<Checkpoint> c =
      ReadCheckpointFile(ShardCheckpointPath(dir, 0, 1));
  ASSERT_TRUE(c.ok()) << c.status();

  ParamShardOptions options;
  options.num_workers = 2;
  ParamShard shard(options);
  ASSERT_TRUE(shard.Resume(*c).ok());
  const TensorLayout other = *TensorLayout::FromShapes({{"v", {10}}});
  absl::Status s = shard.Register(MakeRegistration(0, other)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("different model layout"), std::string::npos)
      << s;
  EXPECT_EQ(shard.MinVersion(), -1);  // nothing configured, nothing loaded

  // Another shard's file is refused up front.
  options.num_shards = 2;
  options.shard = 1;
  ParamShard shard1(options);
  EXPECT_EQ(shard1.Resume(*c).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ringside

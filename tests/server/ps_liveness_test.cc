// Liveness on the server side: ParamShard::Abort fails pending and later
// waits and pushes; a PsServer with a failure timeout aborts the job when a
// registered worker goes silent, and says why in heartbeat replies; the
// update accounting counts every accepted push once.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "proto/parameter_server.grpc.pb.h"
#include "server/param_shard.h"
#include "server/ps_server_runner.h"
#include "worker/strategies/ps/ps_shard_client.h"

namespace ringside {
namespace {

std::string Bytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}

Registration MakeRegistration(int rank, int world_size) {
  Registration r;
  r.rank = rank;
  r.world_size = world_size;
  r.layout = *TensorLayout::FromShapes({{"w", {2, 3}}, {"b", {4}}});
  r.optimizer.type = "sgd";
  r.optimizer.lr = 0.5f;
  r.chunk_bytes = 16;  // chunks [0,4) [4,8) [8,10)
  r.num_shards = 1;
  r.partitioner = "even_bytes";
  return r;
}

std::unique_ptr<ParamShard> ReadyShard() {
  ParamShardOptions options;
  options.num_workers = 2;
  auto shard = std::make_unique<ParamShard>(options);
  EXPECT_TRUE(shard->Register(MakeRegistration(0, 2)).ok());
  EXPECT_TRUE(shard->Register(MakeRegistration(1, 2)).ok());
  EXPECT_TRUE(shard->PushInit(0, 0, "float32", Bytes({1, 1, 1, 1})).ok());
  EXPECT_TRUE(shard->PushInit(0, 4, "float32", Bytes({1, 1, 1, 1})).ok());
  EXPECT_TRUE(shard->PushInit(0, 8, "float32", Bytes({1, 1})).ok());
  return shard;
}

TEST(ParamShardAbortTest, WakesPendingPullsAndFailsLaterCalls) {
  std::unique_ptr<ParamShard> shard = ReadyShard();
  absl::StatusOr<ParamShard::PullCursor> cursor = shard->StartPull(0, 1);
  ASSERT_TRUE(cursor.ok());
  absl::Status pulled;
  std::thread puller([&] {
    int64_t offset;
    std::string data;
    pulled = shard->NextReadyChunk(&*cursor, absl::Now() + absl::Seconds(30),
                                   &offset, &data);
  });
  absl::SleepFor(absl::Milliseconds(50));
  const absl::Time aborted = absl::Now();
  shard->Abort(absl::UnavailableError("worker rank 1 lost"));
  shard->Abort(absl::UnavailableError("second reason is ignored"));
  puller.join();
  EXPECT_LT(absl::Now() - aborted, absl::Seconds(5));
  EXPECT_EQ(pulled.code(), absl::StatusCode::kUnavailable) << pulled;
  EXPECT_EQ(pulled.message(), "worker rank 1 lost");
  EXPECT_EQ(shard->aborted().message(), "worker rank 1 lost");
  EXPECT_EQ(shard->PushGradient(0, 0, 0, "float32", Bytes({1, 1, 1, 1})).code(),
            absl::StatusCode::kUnavailable);
  EXPECT_FALSE(shard->WaitAllFinished(absl::Now() + absl::Seconds(30)));
}

TEST(ParamShardAbortTest, CountsEveryAcceptedPushOnce) {
  std::unique_ptr<ParamShard> shard = ReadyShard();
  for (int64_t step = 0; step < 3; ++step) {
    for (int rank = 0; rank < 2; ++rank) {
      for (int64_t off : {0, 4}) {
        ASSERT_TRUE(shard->PushGradient(rank, step, off, "float32",
                                        Bytes({1, 1, 1, 1}))
                        .ok());
      }
      ASSERT_TRUE(
          shard->PushGradient(rank, step, 8, "float32", Bytes({1, 1})).ok());
    }
  }
  // Refused: a stale step and a duplicate push.
  EXPECT_FALSE(shard->PushGradient(0, 1, 0, "float32", Bytes({1, 1, 1, 1})).ok());
  ASSERT_TRUE(shard->PushGradient(0, 3, 0, "float32", Bytes({1, 1, 1, 1})).ok());
  EXPECT_FALSE(shard->PushGradient(0, 3, 0, "float32", Bytes({1, 1, 1, 1})).ok());
  const ParamShard::UpdateCounts c = shard->Counts();
  EXPECT_EQ(c.chunks, 3);
  EXPECT_EQ(c.pushes_min, 3);
  EXPECT_EQ(c.pushes_max, 4);
  EXPECT_EQ(c.pushes_per_rank, (std::vector<int64_t>{10, 9}));
  EXPECT_EQ(c.applied_min, 3);
  EXPECT_EQ(c.applied_max, 3);
  EXPECT_EQ(c.duplicates_refused, 1);
  EXPECT_EQ(c.wrong_step_refused, 1);
  EXPECT_EQ(c.min_version, 3);
  EXPECT_EQ(c.max_version, 3);
}

proto::RegisterRequest RegisterRequest(int rank) {
  proto::RegisterRequest reg;
  reg.set_rank(rank);
  reg.set_world_size(2);
  *reg.mutable_layout() = TensorLayout::FromShapes({{"w", {8}}})->ToProto();
  *reg.mutable_optimizer() = OptimizerConfig().ToProto();
  reg.set_chunk_bytes(32);
  reg.set_num_shards(1);
  reg.set_partitioner("even_bytes");
  return reg;
}

TEST(PsServerLivenessTest, SilentWorkerFailsTheJobForTheOthers) {
  PsServerOptions options;
  options.host = "127.0.0.1";
  options.shard.num_workers = 2;
  options.failure_timeout = absl::Milliseconds(600);
  absl::StatusOr<std::unique_ptr<PsServer>> server = PsServer::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  PsShardClient rank0({"127.0.0.1", (*server)->port()});
  PsShardClient rank1({"127.0.0.1", (*server)->port()});
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  ASSERT_TRUE(rank0.Register(RegisterRequest(0), deadline).ok());
  ASSERT_TRUE(rank1.Register(RegisterRequest(1), deadline).ok());
  std::vector<float> params(8, 1.0f);
  ASSERT_TRUE(rank0.PushInit(0, {{0, 8}}, params, deadline).ok());
  // Rank 1 pushes step 0 and then falls silent; rank 0 keeps beating while
  // it waits for version 1, which needs rank 1's push.
  auto stream = rank1.OpenPush(1, 0, deadline);
  ASSERT_TRUE(stream->Write({0, 8}, params).ok());
  ASSERT_TRUE(stream->Close().ok());
  std::atomic<bool> stop{false};
  std::thread beats([&] {
    while (!stop) {
      rank0.Heartbeat(0, 0, absl::Now() + absl::Seconds(1)).IgnoreError();
      absl::SleepFor(absl::Milliseconds(100));
    }
  });
  const absl::Time start = absl::Now();
  absl::StatusOr<int64_t> pulled =
      rank0.Pull(0, 1, 1, absl::MakeSpan(params), deadline);
  stop = true;
  beats.join();
  ASSERT_FALSE(pulled.ok());
  EXPECT_EQ(pulled.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(pulled.status().message().find(
                "worker rank 1 lost: no heartbeat for 0."),
            std::string::npos)
      << pulled.status();
  EXPECT_NE(pulled.status().message().find("(last seen at step 0)"),
            std::string::npos)
      << pulled.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  absl::StatusOr<std::string> reply =
      rank0.Heartbeat(0, 1, absl::Now() + absl::Seconds(2));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_NE(reply->find("worker rank 1 lost"), std::string::npos) << *reply;
  EXPECT_FALSE((*server)->job_failure().ok());
}

TEST(PsServerLivenessTest, FinishedWorkersAreNotLost) {
  PsServerOptions options;
  options.host = "127.0.0.1";
  options.shard.num_workers = 2;
  options.failure_timeout = absl::Milliseconds(300);
  absl::StatusOr<std::unique_ptr<PsServer>> server = PsServer::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  PsShardClient client({"127.0.0.1", (*server)->port()});
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(client.Register(RegisterRequest(r), deadline).ok());
    ASSERT_TRUE(client.Finish(r, deadline).ok());
  }
  absl::SleepFor(absl::Seconds(1));
  EXPECT_TRUE((*server)->job_failure().ok()) << (*server)->job_failure();
}

}  // namespace
}  // namespace ringside

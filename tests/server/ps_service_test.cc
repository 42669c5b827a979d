// The gRPC edge: bad input reaches the client as a gRPC status naming the
// problem; a pull for a version that never comes ends at the deadline.
#include <gtest/gtest.h>

#include "common/net_address.h"
#include "proto/parameter_server.grpc.pb.h"
#include "server/local_ps_cluster.h"
#include "worker/strategies/ps/ps_shard_client.h"

namespace ringside::testing {
namespace {

TEST(PsServiceTest, WrongSizePushIsInvalidArgumentOverTheWire) {
  auto ps = LocalPsCluster::Start(1, 1, absl::Seconds(30));
  ASSERT_TRUE(ps.ok());
  PsShardClient client((*ps)->addresses()[0]);
  proto::RegisterRequest reg;
  reg.set_rank(0);
  reg.set_world_size(1);
  *reg.mutable_layout() = TensorLayout::FromShapes({{"w", {8}}})->ToProto();
  OptimizerConfig opt;
  *reg.mutable_optimizer() = opt.ToProto();
  reg.set_chunk_bytes(32);
  reg.set_num_shards(1);
  reg.set_partitioner("even_bytes");
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  ASSERT_TRUE(client.Register(reg, deadline).ok());
  std::vector<float> params(8, 1.0f);
  ASSERT_TRUE(client.PushInit(0, {{0, 8}}, params, deadline).ok());

  // A stream whose chunk claims a range of 8 but carries 4 floats.
  std::vector<float> grads(8, 1.0f);
  auto stream = client.OpenPush(0, 0, deadline);
  absl::Status s = stream->Write({0, 4}, grads);
  if (s.ok()) s = stream->Close();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("expected 32"), std::string::npos) << s;

  // Version 1 never comes (nobody pushed): the pull ends at its deadline
  // with a message naming the missing rank.
  absl::StatusOr<int64_t> pulled = client.Pull(
      0, 1, 1, absl::MakeSpan(params), absl::Now() + absl::Milliseconds(1500));
  ASSERT_FALSE(pulled.ok());
  EXPECT_EQ(pulled.status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST(PsServiceTest, HeartbeatFromAnUnknownRankIsRefused) {
  auto ps = LocalPsCluster::Start(1, 2, absl::Seconds(30));
  ASSERT_TRUE(ps.ok());
  PsShardClient client((*ps)->addresses()[0]);
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  for (int rank : {-4, 2}) {
    absl::StatusOr<std::string> reply = client.Heartbeat(rank, 0, deadline);
    ASSERT_FALSE(reply.ok()) << rank;
    EXPECT_EQ(reply.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(reply.status().message().find("unknown rank"), std::string::npos)
        << reply.status();
  }
  EXPECT_TRUE(client.Heartbeat(1, 0, deadline).ok());
}

TEST(PsServiceTest, UnreachableServerFailsAtTheDeadline) {
  PsShardClient client({"127.0.0.1", 1});  // nothing listens on port 1
  proto::RegisterRequest reg;
  absl::Status s =
      client.Register(reg, absl::Now() + absl::Milliseconds(300)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_NE(s.message().find("unreachable"), std::string::npos) << s;
}

}  // namespace
}  // namespace ringside::testing

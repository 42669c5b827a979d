// The parameter server's bulk data path (--ps_transport=tcp): the oracle
// for sps, dps and async_ps (staleness 0) over it; a wrong token refused
// on it; malformed peers (a handshake of garbage, a frame the connection
// does not allow, a stream cut off mid-chunk) refused or dropped while the
// server keeps serving real workers; and the transport's flag refused with
// TLS.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "common/bulk_socket.h"
#include "common/bulk_wire.h"
#include "server/ps_server_runner.h"
#include "tests/testing/oracle_harness.h"
#include "worker/strategies/ps/async_ps_options.h"
#include "worker/strategies/ps/ps_bulk_client.h"
#include "worker/strategies/ps/ps_options.h"
#include "worker/strategies/ps/ps_shard_client.h"

namespace ringside::testing {
namespace {

using Param = std::tuple<std::string, int, std::string>;

class BulkPathOracleTest : public ::testing::TestWithParam<Param> {};

TEST_P(BulkPathOracleTest, MatchesSingleWorkerWithGlobalBatch) {
  const auto [strategy, n, optimizer] = GetParam();
  OracleSetup setup;
  setup.num_servers = strategy == "sps" ? 1 : 2;
  setup.optimizer.type = optimizer;
  if (optimizer == "adam") setup.optimizer.lr = 0.01f;
  PsOptions ps;
  ps.transport = "tcp";
  ps.chunk_bytes = 1024;  // several chunks per server
  setup.sync.strategy.Set(ps);
  if (strategy == "async_ps") setup.sync.strategy.Set(AsyncPsOptions{0});
  absl::StatusOr<TrainResult> reference = RunReference(setup, n);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::StatusOr<OracleRun> run = RunWorkers(setup, strategy, n);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(MatchesReference(*run, *reference));
  for (const nlohmann::json& f : run->final_records) {
    EXPECT_EQ(f["ps_transport"], "tcp") << f.dump();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Strategies, BulkPathOracleTest,
    ::testing::Combine(::testing::Values("sps", "dps", "async_ps"),
                       ::testing::Values(1, 2, 3),
                       ::testing::Values("sgd", "adam")),
    [](const auto& info) {
      return std::get<0>(info.param) + "_" +
             std::to_string(std::get<1>(info.param)) + "workers_" +
             std::get<2>(info.param);
    });

// A one-shard server of 2 workers with `token`.
std::unique_ptr<PsServer> StartServer(const std::string& token) {
  PsServerOptions options;
  options.host = "127.0.0.1";
  options.shard = {2, 0, 1};
  options.security.auth_token = token;
  absl::StatusOr<std::unique_ptr<PsServer>> server = PsServer::Start(options);
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? std::move(*server) : nullptr;
}

BulkEndpoint Endpoint(const PsServer& server, const std::string& token,
                      int rank) {
  BulkEndpoint e;
  e.host = "127.0.0.1";
  e.port = server.bulk_port();
  e.rank = rank;
  e.shard = 0;
  e.auth_token = token;
  e.range = KeyRange{0, 64};
  e.max_chunk_elements = 16;
  return e;
}

TEST(BulkPathTest, AWrongTokenIsRefusedAndTheRightOneAccepted) {
  std::unique_ptr<PsServer> server = StartServer("right-token");
  ASSERT_NE(server, nullptr);
  ASSERT_GT(server->bulk_port(), 0);
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  BulkConnection wrong(Endpoint(*server, "wrong-token", 0), BulkRole::kPush);
  absl::Status s = wrong.Connect(deadline);
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << s;
  BulkConnection none(Endpoint(*server, "", 0), BulkRole::kPull);
  EXPECT_EQ(none.Connect(deadline).code(),
            absl::StatusCode::kPermissionDenied);
  BulkConnection right(Endpoint(*server, "right-token", 0), BulkRole::kPush);
  EXPECT_TRUE(right.Connect(deadline).ok());
}

// Completes the handshake by hand on a raw socket (what a malformed peer
// with the token would do); returns the descriptor.
int RawHandshake(const PsServer& server, int rank) {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  absl::StatusOr<int> fd =
      ConnectTcp("127.0.0.1", server.bulk_port(), deadline, "test peer");
  EXPECT_TRUE(fd.ok()) << fd.status();
  if (!fd.ok()) return -1;
  std::string hello(kBulkHelloBytes, '\0');
  EXPECT_TRUE(ReadFull(*fd, hello.data(), hello.size(), deadline, "t").ok());
  BulkAuth auth;
  auth.rank = rank;
  auth.shard = 0;
  auth.role = BulkRole::kPush;
  auth.client_nonce = NewBulkNonce();
  auth.proof = BulkProof("", true, hello.substr(8), auth.client_nonce, rank, 0,
                         BulkRole::kPush);
  EXPECT_TRUE(WriteFull(*fd, EncodeBulkAuth(auth), deadline, "t").ok());
  std::string welcome(kBulkWelcomeBytes, '\0');
  EXPECT_TRUE(
      ReadFull(*fd, welcome.data(), welcome.size(), deadline, "t").ok());
  EXPECT_TRUE(ParseBulkWelcome(welcome).ok());
  return *fd;
}

// Reads until the server closes the connection (within 10 s); returns
// what it sent.
std::string ReadToEnd(int fd) {
  std::string got;
  char buffer[4096];
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (absl::Now() < deadline) {
    const ssize_t r = ::recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (r == 0) break;
    if (r > 0) {
      got.append(buffer, r);
    } else {
      absl::SleepFor(absl::Milliseconds(5));
    }
  }
  return got;
}

TEST(BulkPathTest, MalformedPeersAreRefusedAndTheServerKeepsServing) {
  std::unique_ptr<PsServer> server = StartServer("");
  ASSERT_NE(server, nullptr);
  // Register rank 0 and 1 over gRPC with a 64-float model in 16-float
  // chunks, and give it initial values.
  std::vector<std::unique_ptr<PsShardClient>> clients;
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  proto::RegisterRequest request;
  request.set_world_size(2);
  *request.mutable_layout() =
      TensorLayout::FromShapes({{"w", {8, 8}}})->ToProto();
  OptimizerConfig sgd;
  sgd.momentum = 0;
  sgd.lr = 1.0f;
  *request.mutable_optimizer() = sgd.ToProto();
  request.set_chunk_bytes(64);
  request.set_num_shards(1);
  request.set_partitioner("even_bytes");
  std::vector<float> init(64), params(64, -1.0f), grads(64);
  for (int i = 0; i < 64; ++i) {
    init[i] = 0.5f * i;
    grads[i] = 1.0f;
  }
  for (int rank = 0; rank < 2; ++rank) {
    clients.push_back(std::make_unique<PsShardClient>(
        HostPort{"127.0.0.1", server->port()}));
    request.set_rank(rank);
    absl::StatusOr<Registered> r = clients[rank]->Register(request, deadline);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->bulk_port, server->bulk_port());
  }
  std::vector<KeyRange> chunks;
  for (int64_t at = 0; at < 64; at += 16) chunks.push_back({at, at + 16});
  ASSERT_TRUE(clients[0]->PushInit(0, chunks, init, deadline).ok());

  // 1. A handshake of garbage: closed without an answer beyond the hello.
  {
    absl::StatusOr<int> fd =
        ConnectTcp("127.0.0.1", server->bulk_port(), deadline, "garbage");
    ASSERT_TRUE(fd.ok());
    std::string junk(kBulkAuthBytes, 'x');
    ASSERT_TRUE(WriteFull(*fd, junk, deadline, "garbage").ok());
    EXPECT_EQ(ReadToEnd(*fd).size(), static_cast<size_t>(kBulkHelloBytes));
    ::close(*fd);
  }
  // 2. A frame the connection does not allow (a chunk larger than the
  // shard's chunks): a kError naming it, then the server closes.
  {
    const int fd = RawHandshake(*server, 1);
    ASSERT_GE(fd, 0);
    BulkHeader h;
    h.kind = BulkKind::kPushChunk;
    h.rank = 1;
    h.count = 1 << 20;
    ASSERT_TRUE(WriteFull(fd, EncodeBulkHeader(h), deadline, "t").ok());
    const std::string answer = ReadToEnd(fd);
    EXPECT_NE(answer.find("a chunk of 1048576 elements"), std::string::npos)
        << answer;
    ::close(fd);
  }
  // 3. A stream cut off in the middle of a chunk's payload.
  {
    const int fd = RawHandshake(*server, 1);
    ASSERT_GE(fd, 0);
    BulkHeader h;
    h.kind = BulkKind::kPushChunk;
    h.rank = 1;
    h.count = 16;
    ASSERT_TRUE(WriteFull(fd, EncodeBulkHeader(h) + std::string(20, '\0'),
                          deadline, "t")
                    .ok());
    ::close(fd);
  }
  EXPECT_GE(server->bulk_refused(), 2);

  // The server still serves real workers over the bulk path: both push
  // step 0 (gradient 1 everywhere), and both pull version 1 = init - 1.
  for (int rank = 0; rank < 2; ++rank) {
    BulkEndpoint e = Endpoint(*server, "", rank);
    ASSERT_TRUE(clients[rank]->UseBulkPath(e, deadline).ok());
    std::unique_ptr<PsShardClient::PushStream> push =
        clients[rank]->OpenPush(rank, 0, deadline);
    for (const KeyRange& c : chunks) ASSERT_TRUE(push->Write(c, grads).ok());
    ASSERT_TRUE(push->Close().ok());
  }
  for (int rank = 0; rank < 2; ++rank) {
    absl::StatusOr<int64_t> bytes =
        clients[rank]->Pull(rank, 1, 4, absl::MakeSpan(params), deadline);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    EXPECT_EQ(*bytes, 64 * 4);
    for (int i = 0; i < 64; ++i) ASSERT_EQ(params[i], init[i] - 1.0f) << i;
  }
  // A push the shard refuses (step 0 again: stale) comes back with the
  // shard's own status code, and the connection keeps working.
  std::unique_ptr<PsShardClient::PushStream> again =
      clients[0]->OpenPush(0, 0, deadline);
  ASSERT_TRUE(again->Write(chunks[0], grads).ok());
  absl::Status stale = again->Close();
  EXPECT_FALSE(stale.ok());
  EXPECT_NE(stale.message().find("bulk push"), std::string::npos) << stale;
  again.reset();
  std::unique_ptr<PsShardClient::PushStream> next =
      clients[0]->OpenPush(0, 1, deadline);
  for (const KeyRange& c : chunks) ASSERT_TRUE(next->Write(c, grads).ok());
  EXPECT_TRUE(next->Close().ok());
}

TEST(BulkPathTest, TheTransportIsGrpcOrTcpAndTcpIsRefusedWithTls) {
  PsOptions ps;
  ps.transport = "tcp";
  EXPECT_TRUE(ps.Validate().ok());
  ps.transport = "udp";
  absl::Status s = ps.Validate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("grpc or tcp"), std::string::npos) << s;
  // A worker with TLS asking for the bulk path is refused before it
  // registers, saying why.
  OracleSetup setup;
  setup.num_servers = 1;
  ps.transport = "tcp";
  setup.sync.strategy.Set(ps);
  setup.sync.security.tls = true;
  absl::StatusOr<OracleRun> run = RunWorkers(setup, "sps", 1);
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().message().find("does not encrypt"),
            std::string::npos)
      << run.status();
}

}  // namespace
}  // namespace ringside::testing

// StoreServer + GrpcStore over loopback: the Store contract over the wire,
// server-side waiting, errors naming the address and the missing keys, and
// an unreachable store failing at its deadline.
#include "collectives/grpc_store.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>

#include "absl/time/clock.h"
#include "collectives/store_service.h"

namespace ringside {
namespace {

class GrpcStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StoreServerOptions options;
    options.host = "127.0.0.1";
    absl::StatusOr<std::unique_ptr<StoreServer>> server =
        StoreServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    address_ = {"127.0.0.1", server_->port()};
  }

  std::unique_ptr<GrpcStore> Client() {
    GrpcStoreOptions options;
    options.connect_timeout = absl::Seconds(5);
    options.rpc_timeout = absl::Seconds(5);
    absl::StatusOr<std::unique_ptr<GrpcStore>> client =
        GrpcStore::Connect(address_, options);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  std::unique_ptr<StoreServer> server_;
  HostPort address_;
};

TEST_F(GrpcStoreTest, SetGetWaitAddOverLoopback) {
  std::unique_ptr<GrpcStore> store = Client();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->address(), address_.ToString());
  const std::string bytes("\0\1\2binary", 9);
  ASSERT_TRUE(store->Set("k", bytes).ok());
  absl::StatusOr<std::string> v = store->Get("k", absl::Seconds(1));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, bytes);
  EXPECT_TRUE(store->Wait({"k"}, absl::ZeroDuration()).ok());
  EXPECT_EQ(*store->Add("n", 3), 3);
  EXPECT_EQ(*store->Add("n", 4), 7);
  // The server's store holds the same data.
  EXPECT_EQ(*server_->store().Get("n", absl::ZeroDuration()), "7");
}

TEST_F(GrpcStoreTest, GetBlocksOnTheServerUntilAnotherClientSets) {
  std::unique_ptr<GrpcStore> reader = Client();
  std::unique_ptr<GrpcStore> writer = Client();
  ASSERT_NE(reader, nullptr);
  ASSERT_NE(writer, nullptr);
  std::thread set_later([&] {
    absl::SleepFor(absl::Milliseconds(150));
    ASSERT_TRUE(writer->Set("nccl_unique_id", "id").ok());
  });
  const absl::Time start = absl::Now();
  absl::StatusOr<std::string> v =
      reader->Get("nccl_unique_id", absl::Seconds(10));
  set_later.join();
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, "id");
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(140));
}

TEST_F(GrpcStoreTest, MissingKeyTimesOutNamingKeyAndAddress) {
  std::unique_ptr<GrpcStore> store = Client();
  ASSERT_NE(store, nullptr);
  const absl::Time start = absl::Now();
  absl::StatusOr<std::string> v = store->Get("rank_7", absl::Milliseconds(300));
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(v.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(v.status().message().find("rank_7"), std::string::npos)
      << v.status();
  EXPECT_NE(v.status().message().find(address_.ToString()), std::string::npos)
      << v.status();
  EXPECT_GE(took, absl::Milliseconds(290));
  EXPECT_LT(took, absl::Seconds(3));

  absl::Status s = store->Wait({"x", "y"}, absl::ZeroDuration());
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(s.message().find("[x, y]"), std::string::npos) << s;
}

TEST_F(GrpcStoreTest, ServerShutdownWakesBlockedCalls) {
  std::unique_ptr<GrpcStore> store = Client();
  ASSERT_NE(store, nullptr);
  std::thread stopper([&] {
    absl::SleepFor(absl::Milliseconds(100));
    server_->Shutdown(absl::Seconds(1));
  });
  const absl::Time start = absl::Now();
  absl::StatusOr<std::string> v = store->Get("never", absl::Seconds(30));
  stopper.join();
  EXPECT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find(address_.ToString()), std::string::npos)
      << v.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST(GrpcStoreUnreachableTest, ConnectFailsAtTheDeadline) {
  const HostPort nowhere{"127.0.0.1", 1};  // nothing listens on port 1
  GrpcStoreOptions options;
  options.connect_timeout = absl::Milliseconds(500);
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<GrpcStore>> store =
      GrpcStore::Connect(nowhere, options);
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(store.status().message().find("127.0.0.1:1"), std::string::npos)
      << store.status();
  EXPECT_NE(store.status().message().find("unreachable"), std::string::npos);
  EXPECT_GE(took, absl::Milliseconds(450));
  EXPECT_LT(took, absl::Seconds(3));
}

TEST(GrpcStoreUnreachableTest, RpcToAStoppedServerFailsAtItsDeadline) {
  StoreServerOptions server_options;
  server_options.host = "127.0.0.1";
  auto server = StoreServer::Start(server_options);
  ASSERT_TRUE(server.ok()) << server.status();
  const HostPort address{"127.0.0.1", (*server)->port()};
  GrpcStoreOptions options;
  options.connect_timeout = absl::Seconds(5);
  options.rpc_timeout = absl::Milliseconds(500);
  auto store = GrpcStore::Connect(address, options);
  ASSERT_TRUE(store.ok()) << store.status();
  server->reset();  // the store goes away

  const absl::Time start = absl::Now();
  absl::Status s = (*store)->Set("k", "v");
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_NE(s.message().find(address.ToString()), std::string::npos) << s;
  EXPECT_LT(took, absl::Seconds(3));
}

TEST(StoreServerTest, RejectsABadPort) {
  StoreServerOptions options;
  options.port = 70000;
  EXPECT_EQ(StoreServer::Start(options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ringside

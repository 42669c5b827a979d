// The auth matrix over real gRPC on loopback: a parameter server and a
// rendezvous store that require the job's token, called with {no token,
// wrong token, right token} over {insecure, TLS}: UNAUTHENTICATED,
// UNAUTHENTICATED, OK — and a rejected call leaves the server's state as it
// was. Every method of both services (found from the proto descriptors, so
// a new RPC is covered without touching this test) rejects a call without
// the token. TLS clients without the right CA, plaintext clients of a TLS
// server and certificate-less clients of a mutual-TLS server fail to
// connect with an error saying what to check.
#include <gmock/gmock.h>
#include <google/protobuf/descriptor.h>
#include <grpcpp/generic/generic_stub.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "collectives/grpc_store.h"
#include "collectives/store_service.h"
#include "common/auth.h"
#include "common/grpc_credentials.h"
#include "proto/parameter_server.grpc.pb.h"
#include "proto/store.grpc.pb.h"
#include "server/ps_server_runner.h"
#include "tests/testing/test_pki.h"
#include "worker/strategies/ps/ps_shard_client.h"

namespace ringside {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kRightToken[] = "right-token-0123456789";
constexpr char kWrongToken[] = "wrong-token-9876543210";

enum class Transport { kInsecure, kTls };
enum class Token { kNone, kWrong, kRight };

std::string TmpPath(const std::string& name) {
  return absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
}

const TestPki& Pki() {
  static const TestPki* pki = [] {
    absl::StatusOr<TestPki> made = MakeTestPki(TmpPath("pki"));
    if (!made.ok()) {
      std::fprintf(stderr, "%s\n", made.status().ToString().c_str());
      std::abort();
    }
    return new TestPki(*made);
  }();
  return *pki;
}

// Security of a server (TLS without client certificates) or a client.
GrpcSecurity Security(Transport transport, Token token, bool server) {
  GrpcSecurityFiles files;
  if (transport == Transport::kTls) {
    if (server) {
      files = Pki().Files("");
    } else {
      files.tls_ca = Pki().ca_cert;
    }
  }
  absl::StatusOr<GrpcSecurity> security = LoadGrpcSecurity(files);
  EXPECT_TRUE(security.ok()) << security.status();
  if (token == Token::kRight) security->auth_token = kRightToken;
  if (token == Token::kWrong) security->auth_token = kWrongToken;
  return *security;
}

proto::RegisterRequest Registration(int rank) {
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

absl::StatusOr<std::unique_ptr<PsServer>> StartPs(const GrpcSecurity& security) {
  PsServerOptions options;
  options.host = "127.0.0.1";
  options.shard = {2, 0, 1};
  options.security = security;
  return PsServer::Start(options);
}

absl::StatusOr<std::unique_ptr<StoreServer>> StartStore(
    const GrpcSecurity& security) {
  StoreServerOptions options;
  options.host = "127.0.0.1";
  options.security = security;
  return StoreServer::Start(options);
}

std::string TransportName(Transport t) {
  return t == Transport::kTls ? "Tls" : "Insecure";
}
std::string TokenName(Token t) {
  return t == Token::kNone ? "NoToken" : t == Token::kWrong ? "WrongToken"
                                                            : "RightToken";
}

class AuthMatrixTest
    : public ::testing::TestWithParam<std::tuple<Transport, Token>> {
 protected:
  Transport transport() const { return std::get<0>(GetParam()); }
  Token token() const { return std::get<1>(GetParam()); }
  GrpcSecurity ServerSecurity() const {
    return Security(transport(), Token::kRight, /*server=*/true);
  }
  GrpcSecurity ClientSecurity() const {
    return Security(transport(), token(), /*server=*/false);
  }
  void ExpectVerdict(const absl::Status& s) const {
    if (token() == Token::kRight) {
      EXPECT_TRUE(s.ok()) << s;
      return;
    }
    EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated) << s;
    EXPECT_THAT(s.message(), HasSubstr(token() == Token::kNone
                                           ? "missing auth token"
                                           : "wrong auth token"));
    EXPECT_THAT(s.message(), HasSubstr("--auth_token_file"));
    EXPECT_THAT(std::string(s.message()), Not(HasSubstr(kRightToken)));
    EXPECT_THAT(std::string(s.message()), Not(HasSubstr(kWrongToken)));
  }
};

TEST_P(AuthMatrixTest, ParameterServer) {
  absl::StatusOr<std::unique_ptr<PsServer>> ps = StartPs(ServerSecurity());
  ASSERT_TRUE(ps.ok()) << ps.status();
  const HostPort address{"127.0.0.1", (*ps)->port()};
  PsShardClient client(address, ClientSecurity());
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  ExpectVerdict(client.Register(Registration(0), deadline).status());
  ExpectVerdict(client.Finish(0, deadline));
  if (token() != Token::kRight) {
    std::vector<float> params(8, 1.0f);
    ExpectVerdict(
        client.Pull(0, 0, 1, absl::MakeSpan(params), deadline).status());
    ExpectVerdict(client.PushInit(0, {{0, 8}}, params, deadline));
    auto push = client.OpenPush(0, 0, deadline);
    absl::Status pushed = push->Write({0, 8}, params);
    if (pushed.ok()) pushed = push->Close();
    ExpectVerdict(pushed);
  }

  // The rejected calls did not register rank 0 with the server: a client
  // with the right token registers it now for the first time (a second
  // registration would be ALREADY_EXISTS).
  PsShardClient good(address, Security(transport(), Token::kRight, false));
  absl::Status again = good.Register(Registration(0), deadline).status();
  if (token() == Token::kRight) {
    EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists) << again;
  } else {
    EXPECT_TRUE(again.ok()) << again;
    EXPECT_EQ((*ps)->shard().MinVersion(), -1);  // nothing initialized
  }
}

TEST_P(AuthMatrixTest, RendezvousStore) {
  absl::StatusOr<std::unique_ptr<StoreServer>> server =
      StartStore(ServerSecurity());
  ASSERT_TRUE(server.ok()) << server.status();
  GrpcStoreOptions options;
  options.connect_timeout = absl::Seconds(10);
  options.rpc_timeout = absl::Seconds(5);
  options.security = ClientSecurity();
  absl::StatusOr<std::unique_ptr<GrpcStore>> store =
      GrpcStore::Connect({"127.0.0.1", (*server)->port()}, options);
  ASSERT_TRUE(store.ok()) << store.status();  // the token is per call
  ExpectVerdict((*store)->Set("k", "v"));
  ExpectVerdict((*store)->Add("n", 2).status());
  ExpectVerdict((*store)->Get("k", absl::ZeroDuration()).status());
  ExpectVerdict((*store)->Wait({"k"}, absl::ZeroDuration()));
  // Rejected calls wrote nothing.
  EXPECT_EQ((*server)->store().size(), token() == Token::kRight ? 2u : 0u);
}

INSTANTIATE_TEST_SUITE_P(
    TransportsAndTokens, AuthMatrixTest,
    ::testing::Combine(::testing::Values(Transport::kInsecure, Transport::kTls),
                       ::testing::Values(Token::kNone, Token::kWrong,
                                         Token::kRight)),
    [](const ::testing::TestParamInfo<std::tuple<Transport, Token>>& info) {
      return TransportName(std::get<0>(info.param)) +
             TokenName(std::get<1>(info.param));
    });

// Calls `method` ("/pkg.Service/Name") with one empty request message and
// returns the call's status (whatever the method's streaming kind).
grpc::Status CallWithEmptyRequest(const std::shared_ptr<grpc::Channel>& channel,
                                  const std::string& method) {
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue cq;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call =
      stub.PrepareCall(&context, method, &cq);
  void* tag = nullptr;
  bool ok = false;
  auto next = [&](intptr_t want) {
    EXPECT_TRUE(cq.Next(&tag, &ok));
    EXPECT_EQ(reinterpret_cast<intptr_t>(tag), want);
  };
  call->StartCall(reinterpret_cast<void*>(1));
  next(1);
  grpc::Slice empty("");
  grpc::ByteBuffer request(&empty, 1);
  call->Write(request, reinterpret_cast<void*>(2));
  next(2);
  call->WritesDone(reinterpret_cast<void*>(3));
  next(3);
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(4));
  next(4);
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  return status;
}

std::vector<std::string> MethodsOf(const std::string& service_name) {
  const google::protobuf::ServiceDescriptor* service =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
          service_name);
  EXPECT_NE(service, nullptr) << service_name;
  std::vector<std::string> methods;
  for (int i = 0; service != nullptr && i < service->method_count(); ++i) {
    methods.push_back(
        absl::StrCat("/", service_name, "/", service->method(i)->name()));
  }
  return methods;
}

TEST(AuthCoverageTest, EveryParameterServerMethodChecksTheToken) {
  // Linking the generated code registers the descriptors.
  (void)proto::ParameterServer::service_full_name();
  absl::StatusOr<std::unique_ptr<PsServer>> ps =
      StartPs(Security(Transport::kInsecure, Token::kRight, true));
  ASSERT_TRUE(ps.ok()) << ps.status();
  const std::string target = absl::StrCat("127.0.0.1:", (*ps)->port());
  const std::vector<std::string> methods =
      MethodsOf(proto::ParameterServer::service_full_name());
  EXPECT_GE(methods.size(), 5u);
  for (const std::string& method : methods) {
    for (Token token : {Token::kNone, Token::kWrong}) {
      grpc::Status s = CallWithEmptyRequest(
          MakeChannel(target, Security(Transport::kInsecure, token, false),
                      grpc::ChannelArguments()),
          method);
      EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED)
          << method << " with " << TokenName(token)
          << " answered: " << s.error_message()
          << " -- its handler must start with CheckAuthToken";
    }
  }
}

TEST(AuthCoverageTest, EveryStoreMethodChecksTheToken) {
  (void)proto::Store::service_full_name();
  absl::StatusOr<std::unique_ptr<StoreServer>> server =
      StartStore(Security(Transport::kInsecure, Token::kRight, true));
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string target = absl::StrCat("127.0.0.1:", (*server)->port());
  const std::vector<std::string> methods =
      MethodsOf(proto::Store::service_full_name());
  EXPECT_GE(methods.size(), 4u);
  for (const std::string& method : methods) {
    for (Token token : {Token::kNone, Token::kWrong}) {
      grpc::Status s = CallWithEmptyRequest(
          MakeChannel(target, Security(Transport::kInsecure, token, false),
                      grpc::ChannelArguments()),
          method);
      EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED)
          << method << " with " << TokenName(token)
          << " answered: " << s.error_message()
          << " -- its handler must start with CheckAuthToken";
    }
  }
  EXPECT_EQ((*server)->store().size(), 0u);
}

// A TLS server; clients that cannot verify it (or that it cannot verify)
// never get a call through, and the error says what to check.
class TlsConnectTest : public ::testing::Test {
 protected:
  absl::Status RegisterWith(const GrpcSecurity& server,
                            const GrpcSecurity& client) {
    absl::StatusOr<std::unique_ptr<PsServer>> ps = StartPs(server);
    if (!ps.ok()) return ps.status();
    PsShardClient c({"127.0.0.1", (*ps)->port()}, client);
    return c.Register(Registration(0), absl::Now() + absl::Seconds(2))
        .status();
  }
  absl::Status ConnectStoreWith(const GrpcSecurity& server,
                                const GrpcSecurity& client) {
    absl::StatusOr<std::unique_ptr<StoreServer>> s = StartStore(server);
    if (!s.ok()) return s.status();
    GrpcStoreOptions options;
    options.connect_timeout = absl::Seconds(2);
    options.security = client;
    return GrpcStore::Connect({"127.0.0.1", (*s)->port()}, options).status();
  }
};

TEST_F(TlsConnectTest, ClientWithoutTheCaCannotConnect) {
  const GrpcSecurity server = Security(Transport::kTls, Token::kRight, true);
  GrpcSecurity no_ca = Security(Transport::kTls, Token::kRight, false);
  no_ca.tls_ca_pem.clear();  // TLS with the system's roots only
  for (const absl::Status& s :
       {RegisterWith(server, no_ca), ConnectStoreWith(server, no_ca)}) {
    EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
    EXPECT_THAT(s.message(), HasSubstr("unreachable"));
    EXPECT_THAT(s.message(), HasSubstr("pass --tls_ca with the CA"));
  }
}

TEST_F(TlsConnectTest, ClientTrustingAnotherCaCannotConnect) {
  const GrpcSecurity server = Security(Transport::kTls, Token::kRight, true);
  GrpcSecurityFiles files;
  files.tls_ca = Pki().other_ca_cert;
  GrpcSecurity other = *LoadGrpcSecurity(files);
  other.auth_token = kRightToken;
  const absl::Status s = RegisterWith(server, other);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_THAT(s.message(), HasSubstr("is --tls_ca the CA that signed"));
}

TEST_F(TlsConnectTest, PlaintextClientOfATlsServerCannotConnect) {
  const absl::Status s =
      RegisterWith(Security(Transport::kTls, Token::kRight, true),
                   Security(Transport::kInsecure, Token::kRight, false));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_THAT(s.message(), HasSubstr("if the server uses TLS"));
}

TEST_F(TlsConnectTest, MutualTlsNeedsTheClientCertificate) {
  // The server given the CA requires client certificates signed by it.
  GrpcSecurity server = *LoadGrpcSecurity(Pki().Files(Pki().ca_cert));
  server.auth_token = kRightToken;
  GrpcSecurity with_cert = server;  // same certificate, key and CA
  EXPECT_TRUE(RegisterWith(server, with_cert).ok());
  const absl::Status s =
      RegisterWith(server, Security(Transport::kTls, Token::kRight, false));
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
}

TEST_F(TlsConnectTest, ServerWithoutCertificateIsRefused) {
  GrpcSecurity ca_only = Security(Transport::kTls, Token::kRight, false);
  absl::StatusOr<std::unique_ptr<PsServer>> ps = StartPs(ca_only);
  EXPECT_EQ(ps.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ps.status().message(), HasSubstr("--tls_cert and --tls_key"));
  absl::StatusOr<std::unique_ptr<StoreServer>> store = StartStore(ca_only);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ringside

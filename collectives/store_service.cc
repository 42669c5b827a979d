#include "collectives/store_service.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/auth.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"

namespace ringside {
namespace {

// The server stops waiting this long before the caller's deadline, so the
// "missing keys" reply still reaches the caller.
constexpr absl::Duration kReplyMargin = absl::Milliseconds(50);

// When a blocking call gives up: after `timeout_ms`, or just before the
// call's own deadline, whichever is first.
absl::Time WaitDeadline(grpc::ServerContext* context, int64_t timeout_ms) {
  absl::Time deadline = absl::Now() + absl::Milliseconds(timeout_ms);
  const absl::Time call_deadline = absl::FromChrono(context->deadline());
  if (call_deadline != absl::InfiniteFuture()) {
    deadline = std::min(deadline, call_deadline - kReplyMargin);
  }
  return deadline;
}

}  // namespace

grpc::Status StoreService::Set(grpc::ServerContext* context,
                               const proto::StoreSetRequest* request,
                               proto::StoreSetReply* reply) {
  if (grpc::Status a = CheckAuthToken(*context, auth_token_); !a.ok()) {
    return a;
  }
  return ToGrpcStatus(store_->Set(request->key(), request->value()));
}

grpc::Status StoreService::Get(grpc::ServerContext* context,
                               const proto::StoreGetRequest* request,
                               proto::StoreGetReply* reply) {
  if (grpc::Status a = CheckAuthToken(*context, auth_token_); !a.ok()) {
    return a;
  }
  const absl::Time deadline = WaitDeadline(context, request->timeout_ms());
  absl::StatusOr<std::string> value =
      store_->Get(request->key(), deadline - absl::Now());
  if (!value.ok()) return ToGrpcStatus(value.status());
  reply->set_value(*std::move(value));
  return grpc::Status::OK;
}

grpc::Status StoreService::Wait(grpc::ServerContext* context,
                                const proto::StoreWaitRequest* request,
                                proto::StoreWaitReply* reply) {
  if (grpc::Status a = CheckAuthToken(*context, auth_token_); !a.ok()) {
    return a;
  }
  const std::vector<std::string> keys(request->keys().begin(),
                                      request->keys().end());
  return ToGrpcStatus(
      store_->WaitUntil(keys, WaitDeadline(context, request->timeout_ms())));
}

grpc::Status StoreService::Add(grpc::ServerContext* context,
                               const proto::StoreAddRequest* request,
                               proto::StoreAddReply* reply) {
  if (grpc::Status a = CheckAuthToken(*context, auth_token_); !a.ok()) {
    return a;
  }
  absl::StatusOr<int64_t> value = store_->Add(request->key(), request->delta());
  if (!value.ok()) return ToGrpcStatus(value.status());
  reply->set_value(*value);
  return grpc::Status::OK;
}

absl::StatusOr<std::unique_ptr<StoreServer>> StoreServer::Start(
    const StoreServerOptions& options) {
  if (options.port < 0 || options.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("store server port must be 0..65535, got ", options.port));
  }
  RS_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> credentials,
                      MakeServerCredentials(options.security));
  std::unique_ptr<StoreServer> server(
      new StoreServer(options.security.auth_token));
  const std::string address =
      options.host.find(':') != std::string::npos
          ? absl::StrCat("[", options.host, "]:", options.port)
          : absl::StrCat(options.host, ":", options.port);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, credentials, &server->port_);
  builder.RegisterService(&server->service_);
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat("store server: cannot listen on ", address,
                     options.security.tls
                         ? " (or gRPC refused the TLS certificate/key)"
                         : ""));
  }
  return server;
}

void StoreServer::Shutdown(absl::Duration grace) {
  store_.Close();
  if (server_ != nullptr) {
    server_->Shutdown(absl::ToChronoTime(absl::Now() + grace));
    server_->Wait();
    server_.reset();
  }
}

StoreServer::~StoreServer() { Shutdown(absl::Seconds(2)); }

}  // namespace ringside

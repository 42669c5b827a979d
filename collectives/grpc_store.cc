#include "collectives/grpc_store.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/grpc_status.h"

namespace ringside {
namespace {

constexpr absl::Duration kMaxWait = absl::Hours(24 * 7);

absl::Duration ClampWait(absl::Duration timeout) {
  return std::min(std::max(timeout, absl::ZeroDuration()), kMaxWait);
}

}  // namespace

GrpcStore::GrpcStore(std::string address, const GrpcStoreOptions& options)
    : address_(std::move(address)), options_(options) {
  grpc::ChannelArguments args;
  // Reconnect promptly once a late rank 0 starts listening.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  channel_ = MakeChannel(address_, options_.security, args);
  stub_ = proto::Store::NewStub(channel_);
}

absl::StatusOr<std::unique_ptr<GrpcStore>> GrpcStore::Connect(
    const HostPort& server, const GrpcStoreOptions& options) {
  if (options.connect_timeout <= absl::ZeroDuration() ||
      options.rpc_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "GrpcStore: connect_timeout and rpc_timeout must be positive");
  }
  if (absl::Status s = options.security.Validate(); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("GrpcStore: ", s.message()));
  }
  std::unique_ptr<GrpcStore> store(new GrpcStore(server.ToString(), options));
  const absl::Time deadline = absl::Now() + options.connect_timeout;
  if (!store->channel_->WaitForConnected(absl::ToChronoTime(deadline))) {
    return absl::DeadlineExceededError(
        absl::StrCat("store at ", store->address_, " unreachable within ",
                     absl::FormatDuration(options.connect_timeout),
                     SecurityHint(grpc::StatusCode::UNAVAILABLE,
                                  options.security)));
  }
  return store;
}

void GrpcStore::Prepare(grpc::ClientContext* context,
                        absl::Duration wait) const {
  context->set_wait_for_ready(true);
  context->set_deadline(
      absl::ToChronoTime(absl::Now() + wait + options_.rpc_timeout));
}

absl::Status GrpcStore::FromGrpc(const grpc::Status& s,
                                 absl::string_view rpc) const {
  const bool connected = channel_->GetState(false) == GRPC_CHANNEL_READY;
  if (s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED && !connected) {
    return absl::DeadlineExceededError(absl::StrCat(
        rpc, " on store ", address_,
        ": store unreachable before the deadline (", s.error_message(), ")",
        SecurityHint(s.error_code(), options_.security)));
  }
  // What to check about the token or TLS when the call never got through.
  const bool rejected =
      s.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
      (s.error_code() == grpc::StatusCode::UNAVAILABLE && !connected);
  return FromGrpcStatus(
      rejected ? grpc::Status(s.error_code(),
                              absl::StrCat(s.error_message(),
                                           SecurityHint(s.error_code(),
                                                        options_.security)))
               : s,
      absl::StrCat(rpc, " on store ", address_));
}

absl::Status GrpcStore::Set(absl::string_view key, absl::string_view value) {
  grpc::ClientContext context;
  Prepare(&context, absl::ZeroDuration());
  proto::StoreSetRequest request;
  request.set_key(std::string(key));
  request.set_value(std::string(value));
  proto::StoreSetReply reply;
  grpc::Status s = stub_->Set(&context, request, &reply);
  if (!s.ok()) return FromGrpc(s, "Set");
  return absl::OkStatus();
}

absl::StatusOr<std::string> GrpcStore::Get(absl::string_view key,
                                           absl::Duration timeout) {
  const absl::Duration wait = ClampWait(timeout);
  grpc::ClientContext context;
  Prepare(&context, wait);
  proto::StoreGetRequest request;
  request.set_key(std::string(key));
  request.set_timeout_ms(absl::ToInt64Milliseconds(wait));
  proto::StoreGetReply reply;
  grpc::Status s = stub_->Get(&context, request, &reply);
  if (!s.ok()) return FromGrpc(s, "Get");
  return std::move(*reply.mutable_value());
}

absl::Status GrpcStore::Wait(const std::vector<std::string>& keys,
                             absl::Duration timeout) {
  const absl::Duration wait = ClampWait(timeout);
  grpc::ClientContext context;
  Prepare(&context, wait);
  proto::StoreWaitRequest request;
  for (const std::string& key : keys) request.add_keys(key);
  request.set_timeout_ms(absl::ToInt64Milliseconds(wait));
  proto::StoreWaitReply reply;
  grpc::Status s = stub_->Wait(&context, request, &reply);
  if (!s.ok()) return FromGrpc(s, "Wait");
  return absl::OkStatus();
}

absl::StatusOr<int64_t> GrpcStore::Add(absl::string_view key, int64_t delta) {
  grpc::ClientContext context;
  Prepare(&context, absl::ZeroDuration());
  proto::StoreAddRequest request;
  request.set_key(std::string(key));
  request.set_delta(delta);
  proto::StoreAddReply reply;
  grpc::Status s = stub_->Add(&context, request, &reply);
  if (!s.ok()) return FromGrpc(s, "Add");
  return reply.value();
}

}  // namespace ringside

#include "worker/strategies/ps/ps_shard_client.h"

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"

namespace ringside {
namespace {

void SetDeadline(grpc::ClientContext* context, absl::Time deadline) {
  context->set_deadline(absl::ToChronoTime(deadline));
}

}  // namespace

grpc::ChannelArguments BulkChannelArguments() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  // Separate connections per client object: pushes and pulls of different
  // workers in one process (tests, benchmarks) must not share one socket.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return args;
}

namespace {

std::string MethodName(const char* method) {
  return absl::StrCat("/", proto::ParameterServer::service_full_name(), "/",
                      method);
}

}  // namespace

PsShardClient::PsShardClient(const HostPort& server,
                             const GrpcSecurity& security)
    : address_(server.ToString()),
      host_(server.host),
      security_(security),
      channel_(MakeChannel(address_, security_, BulkChannelArguments())),
      pull_channel_(MakeChannel(address_, security_, BulkChannelArguments())),
      stub_(proto::ParameterServer::NewStub(channel_)),
      push_init_method_(MethodName("PushInit").c_str(),
                        grpc::internal::RpcMethod::CLIENT_STREAMING, channel_),
      push_method_(MethodName("Push").c_str(),
                   grpc::internal::RpcMethod::CLIENT_STREAMING, channel_),
      pull_method_(MethodName("Pull").c_str(),
                   grpc::internal::RpcMethod::SERVER_STREAMING,
                   pull_channel_) {}

absl::Status PsShardClient::FromGrpc(const grpc::Status& s,
                                     const char* rpc) const {
  const bool connected = channel_->GetState(false) == GRPC_CHANNEL_READY;
  if (s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED && !connected) {
    return absl::DeadlineExceededError(absl::StrCat(
        rpc, " to parameter server ", address_,
        ": server unreachable before the deadline (", s.error_message(), ")",
        SecurityHint(s.error_code(), security_)));
  }
  // What to check about the token or TLS when the call never got through.
  const bool rejected =
      s.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
      (s.error_code() == grpc::StatusCode::UNAVAILABLE && !connected);
  return FromGrpcStatus(
      rejected ? grpc::Status(s.error_code(),
                              absl::StrCat(s.error_message(),
                                           SecurityHint(s.error_code(),
                                                        security_)))
               : s,
      absl::StrCat(rpc, " to parameter server ", address_));
}

absl::StatusOr<Registered> PsShardClient::Register(
    const proto::RegisterRequest& request, absl::Time deadline) {
  grpc::ClientContext context;
  SetDeadline(&context, deadline);
  context.set_wait_for_ready(true);
  proto::RegisterReply reply;
  grpc::Status s = stub_->Register(&context, request, &reply);
  if (!s.ok()) return FromGrpc(s, "Register");
  Registered registered;
  registered.range = KeyRange{reply.range_begin(), reply.range_end()};
  registered.resume_step = reply.resumed() ? reply.resume_step() : -1;
  registered.shard = reply.shard();
  registered.bulk_port = reply.bulk_port();
  return registered;
}

absl::Status PsShardClient::PushInit(int rank,
                                     const std::vector<KeyRange>& chunks,
                                     absl::Span<const float> params,
                                     absl::Time deadline) {
  grpc::ClientContext context;
  SetDeadline(&context, deadline);
  proto::PushReply reply;
  std::unique_ptr<grpc::ClientWriter<grpc::ByteBuffer>> writer(
      grpc::internal::ClientWriterFactory<grpc::ByteBuffer>::Create(
          channel_.get(), push_init_method_, &context, &reply));
  ChunkHeader header;
  header.rank = rank;
  for (const KeyRange& c : chunks) {
    header.offset = c.begin;
    if (!writer->Write(
            EncodeChunk(header, params.subspan(c.begin, c.size())))) {
      break;  // Finish() reports why.
    }
  }
  writer->WritesDone();
  grpc::Status s = writer->Finish();
  if (!s.ok()) return FromGrpc(s, "PushInit");
  return absl::OkStatus();
}

// A push stream over gRPC (the Push method, raw byte buffers).
class GrpcPushStream final : public PsShardClient::PushStream {
 public:
  GrpcPushStream(PsShardClient* client, int rank, int64_t step,
                 absl::Time deadline)
      : client_(client) {
    SetDeadline(&context_, deadline);
    header_.rank = rank;
    header_.step = step;
    writer_.reset(grpc::internal::ClientWriterFactory<grpc::ByteBuffer>::Create(
        client->channel_.get(), client->push_method_, &context_, &reply_));
  }

  absl::Status Write(const KeyRange& chunk,
                     absl::Span<const float> grads) override {
    header_.offset = chunk.begin;
    if (!writer_->Write(
            EncodeChunk(header_, grads.subspan(chunk.begin, chunk.size())))) {
      // The stream broke; the real reason comes from Finish().
      return Close();
    }
    return absl::OkStatus();
  }

  absl::Status Close() override {
    if (writer_ == nullptr) return absl::OkStatus();
    writer_->WritesDone();
    grpc::Status s = writer_->Finish();
    writer_.reset();
    if (!s.ok()) return client_->FromGrpc(s, "Push");
    return absl::OkStatus();
  }

  void Cancel() override { context_.TryCancel(); }

 private:
  PsShardClient* client_;
  grpc::ClientContext context_;
  proto::PushReply reply_;
  ChunkHeader header_;
  std::unique_ptr<grpc::ClientWriter<grpc::ByteBuffer>> writer_;
};

// A push stream over the bulk path's push connection, which it holds from
// opening to Close.
class BulkPushStream final : public PsShardClient::PushStream {
 public:
  BulkPushStream(PsShardClient* client, int64_t step, absl::Time deadline)
      : lock_(&client->push_bulk_mu_),
        connection_(*client->push_bulk_),
        step_(step),
        deadline_(deadline) {}

  absl::Status Write(const KeyRange& chunk,
                     absl::Span<const float> grads) override {
    if (!status_.ok()) return status_;
    status_ = connection_.PushChunk(step_, chunk, grads, deadline_);
    if (status_.ok()) ++chunks_;
    return status_;
  }

  absl::Status Close() override {
    if (closed_) return status_;
    closed_ = true;
    if (status_.ok()) status_ = connection_.EndPush(step_, chunks_, deadline_);
    return status_;
  }

  void Cancel() override { connection_.Cancel(); }

 private:
  absl::MutexLock lock_;
  BulkConnection& connection_;
  const int64_t step_;
  const absl::Time deadline_;
  int64_t chunks_ = 0;
  bool closed_ = false;
  absl::Status status_;
};

absl::Status PsShardClient::UseBulkPath(const BulkEndpoint& endpoint,
                                        absl::Time deadline) {
  push_bulk_ = std::make_unique<BulkConnection>(endpoint, BulkRole::kPush);
  pull_bulk_ = std::make_unique<BulkConnection>(endpoint, BulkRole::kPull);
  RS_RETURN_IF_ERROR(push_bulk_->Connect(deadline));
  return pull_bulk_->Connect(deadline);
}

std::unique_ptr<PsShardClient::PushStream> PsShardClient::OpenPush(
    int rank, int64_t step, absl::Time deadline) {
  if (push_bulk_ != nullptr) {
    return std::make_unique<BulkPushStream>(this, step, deadline);
  }
  return std::make_unique<GrpcPushStream>(this, rank, step, deadline);
}

absl::StatusOr<int64_t> PsShardClient::Pull(int rank, int64_t version,
                                            int num_chunks,
                                            absl::Span<float> params,
                                            absl::Time deadline,
                                            const ChunkInPlaceFn& on_chunk) {
  if (pull_bulk_ != nullptr) {
    RS_RETURN_IF_ERROR(BeginPull(nullptr));
    absl::StatusOr<int64_t> bytes =
        pull_bulk_->Pull(version, num_chunks, params, deadline, on_chunk);
    EndPull();
    return bytes;
  }
  grpc::ClientContext context;
  SetDeadline(&context, deadline);
  RS_RETURN_IF_ERROR(BeginPull(&context));
  proto::PullRequest request;
  request.set_rank(rank);
  request.set_version(version);
  std::unique_ptr<grpc::ClientReader<grpc::ByteBuffer>> reader(
      grpc::internal::ClientReaderFactory<grpc::ByteBuffer>::Create(
          pull_channel_.get(), pull_method_, &context, request));
  grpc::ByteBuffer message;
  DecodedChunk chunk;
  int64_t bytes = 0;
  int received = 0;
  absl::Status problem;
  while (reader->Read(&message)) {
    problem = DecodeChunk(message, &chunk);
    const int64_t n = chunk.payload_bytes / 4;
    const int64_t offset = chunk.header.offset;
    if (problem.ok() &&
        (chunk.header.step != version || offset < 0 ||
         offset + n > static_cast<int64_t>(params.size()) ||
         chunk.payload_bytes % 4 != 0)) {
      problem = absl::DataLossError(absl::StrCat(
          "bad chunk (offset ", offset, ", ", chunk.payload_bytes,
          " bytes, version ", chunk.header.step, ") for version ", version));
    }
    if (!problem.ok()) {
      problem = absl::DataLossError(
          absl::StrCat("Pull from ", address_, ": ", problem.message()));
      context.TryCancel();
      break;
    }
    CopyPayload(chunk, params.data() + offset);
    bytes += chunk.payload_bytes;
    ++received;
    if (on_chunk) on_chunk(offset, n);
  }
  grpc::Status s = reader->Finish();
  EndPull();
  if (!problem.ok()) return problem;
  if (!s.ok()) return FromGrpc(s, "Pull");
  if (received != num_chunks) {
    return absl::DataLossError(absl::StrCat(
        "Pull from ", address_, ": got ", received, " chunks of version ",
        version, ", expected ", num_chunks));
  }
  return bytes;
}

absl::Status PsShardClient::BeginPull(grpc::ClientContext* context) {
  absl::MutexLock lock(&pull_mu_);
  if (pull_cancelled_) {
    pull_cancelled_ = false;
    return absl::CancelledError(
        absl::StrCat("Pull from ", address_, " cancelled"));
  }
  pull_context_ = context;
  bulk_pulling_ = context == nullptr;
  return absl::OkStatus();
}

void PsShardClient::EndPull() {
  absl::MutexLock lock(&pull_mu_);
  pull_context_ = nullptr;
  bulk_pulling_ = false;
  pull_cancelled_ = false;
}

void PsShardClient::CancelPull() {
  absl::MutexLock lock(&pull_mu_);
  if (bulk_pulling_) {
    pull_bulk_->Cancel();
  } else if (pull_context_ != nullptr) {
    pull_context_->TryCancel();
  } else {
    pull_cancelled_ = true;
  }
}

absl::Status PsShardClient::Finish(int rank, absl::Time deadline) {
  grpc::ClientContext context;
  SetDeadline(&context, deadline);
  proto::FinishRequest request;
  request.set_rank(rank);
  proto::FinishReply reply;
  grpc::Status s = stub_->Finish(&context, request, &reply);
  if (!s.ok()) return FromGrpc(s, "Finish");
  return absl::OkStatus();
}

absl::StatusOr<std::string> PsShardClient::Heartbeat(int rank, int64_t step,
                                                     absl::Time deadline) {
  grpc::ClientContext context;
  SetDeadline(&context, deadline);
  proto::HeartbeatRequest request;
  request.set_rank(rank);
  request.set_step(step);
  proto::HeartbeatReply reply;
  grpc::Status s = stub_->Heartbeat(&context, request, &reply);
  if (!s.ok()) return FromGrpc(s, "Heartbeat");
  return std::move(*reply.mutable_job_failure());
}

}  // namespace ringside

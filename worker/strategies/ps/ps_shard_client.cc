#include "worker/strategies/ps/ps_shard_client.h"

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"

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
      security_(security),
      channel_(MakeChannel(address_, security_, BulkChannelArguments())),
      stub_(proto::ParameterServer::NewStub(channel_)),
      push_init_method_(MethodName("PushInit").c_str(),
                        grpc::internal::RpcMethod::CLIENT_STREAMING, channel_),
      push_method_(MethodName("Push").c_str(),
                   grpc::internal::RpcMethod::CLIENT_STREAMING, channel_),
      pull_method_(MethodName("Pull").c_str(),
                   grpc::internal::RpcMethod::SERVER_STREAMING, channel_) {}

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
  return Registered{KeyRange{reply.range_begin(), reply.range_end()},
                    reply.resumed() ? reply.resume_step() : -1};
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

PsShardClient::PushStream::PushStream(PsShardClient* client, int rank,
                                      int64_t step, absl::Time deadline)
    : client_(client) {
  SetDeadline(&context_, deadline);
  header_.rank = rank;
  header_.step = step;
  writer_.reset(grpc::internal::ClientWriterFactory<grpc::ByteBuffer>::Create(
      client->channel_.get(), client->push_method_, &context_, &reply_));
}

absl::Status PsShardClient::PushStream::Write(const KeyRange& chunk,
                                              absl::Span<const float> grads) {
  header_.offset = chunk.begin;
  if (!writer_->Write(
          EncodeChunk(header_, grads.subspan(chunk.begin, chunk.size())))) {
    // The stream broke; the real reason comes from Finish().
    return Close();
  }
  return absl::OkStatus();
}

absl::Status PsShardClient::PushStream::Close() {
  if (writer_ == nullptr) return absl::OkStatus();
  writer_->WritesDone();
  grpc::Status s = writer_->Finish();
  writer_.reset();
  if (!s.ok()) return client_->FromGrpc(s, "Push");
  return absl::OkStatus();
}

std::unique_ptr<PsShardClient::PushStream> PsShardClient::OpenPush(
    int rank, int64_t step, absl::Time deadline) {
  return std::unique_ptr<PushStream>(
      new PushStream(this, rank, step, deadline));
}

absl::StatusOr<int64_t> PsShardClient::Pull(int rank, int64_t version,
                                            int num_chunks,
                                            absl::Span<float> params,
                                            absl::Time deadline,
                                            const ChunkInPlaceFn& on_chunk) {
  grpc::ClientContext context;
  SetDeadline(&context, deadline);
  {
    absl::MutexLock lock(&pull_mu_);
    if (pull_cancelled_) {
      pull_cancelled_ = false;
      return absl::CancelledError(
          absl::StrCat("Pull from ", address_, " cancelled"));
    }
    pull_context_ = &context;
  }
  proto::PullRequest request;
  request.set_rank(rank);
  request.set_version(version);
  std::unique_ptr<grpc::ClientReader<grpc::ByteBuffer>> reader(
      grpc::internal::ClientReaderFactory<grpc::ByteBuffer>::Create(
          channel_.get(), pull_method_, &context, request));
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
  {
    absl::MutexLock lock(&pull_mu_);
    pull_context_ = nullptr;
    pull_cancelled_ = false;
  }
  if (!problem.ok()) return problem;
  if (!s.ok()) return FromGrpc(s, "Pull");
  if (received != num_chunks) {
    return absl::DataLossError(absl::StrCat(
        "Pull from ", address_, ": got ", received, " chunks of version ",
        version, ", expected ", num_chunks));
  }
  return bytes;
}

void PsShardClient::CancelPull() {
  absl::MutexLock lock(&pull_mu_);
  if (pull_context_ != nullptr) {
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

#include "server/ps_service.h"

#include <chrono>
#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/auth.h"
#include "common/chunk_wire.h"
#include "common/grpc_status.h"

namespace ringside {
namespace {

absl::Time DeadlineOf(const grpc::ServerContext& context,
                      absl::Duration max_wait) {
  const absl::Time cap = absl::Now() + max_wait;
  const auto d = context.deadline();
  if (d == std::chrono::system_clock::time_point::max()) return cap;
  return std::min(cap, absl::FromChrono(d));
}

}  // namespace

absl::StatusOr<Registration> RegistrationFromProto(
    const proto::RegisterRequest& request) {
  absl::StatusOr<TensorLayout> layout =
      TensorLayout::FromProto(request.layout());
  if (!layout.ok()) return layout.status();
  Registration r;
  r.rank = request.rank();
  r.world_size = request.world_size();
  r.layout = *std::move(layout);
  r.optimizer = OptimizerConfig::FromProto(request.optimizer());
  r.chunk_bytes = request.chunk_bytes();
  r.num_shards = request.num_shards();
  r.partitioner = request.partitioner();
  r.summation = request.summation();
  r.ranks_per_pusher = request.ranks_per_pusher();
  r.start_step = request.start_step();
  return r;
}

grpc::Status ParameterServerService::Register(
    grpc::ServerContext* context, const proto::RegisterRequest* request,
    proto::RegisterReply* reply) {
  if (grpc::Status a = CheckAuthToken(*context, options_.auth_token); !a.ok()) {
    return a;
  }
  absl::StatusOr<Registration> r = RegistrationFromProto(*request);
  if (!r.ok()) return ToGrpcStatus(r.status());
  absl::StatusOr<KeyRange> range = shard_->Register(*r);
  if (!range.ok()) return ToGrpcStatus(range.status());
  if (liveness_ != nullptr) {
    liveness_->Track(r->rank,
                     r->summation
                         ? absl::StrCat("the pushing rank of host ", r->rank)
                         : absl::StrCat("worker rank ", r->rank),
                     absl::Now());
  }
  reply->set_shard(options_.shard);
  reply->set_range_begin(range->begin);
  reply->set_range_end(range->end);
  reply->set_bulk_port(options_.bulk_port);
  const int64_t resume_step = shard_->resume_step();
  reply->set_resumed(resume_step >= 0);
  reply->set_resume_step(resume_step >= 0 ? resume_step : 0);
  return grpc::Status::OK;
}

namespace {

// Method indices in proto/parameter_server.proto's service.
constexpr int kPushInitMethod = 1, kPushMethod = 2, kPullMethod = 3;

using RawHandler = grpc::internal::BidiStreamingHandler<
    ParameterServerService, grpc::ByteBuffer, grpc::ByteBuffer>;

// Sends `reply` as the stream's one response message.
template <typename Message>
bool WriteMessage(ParameterServerService::RawStream* stream,
                  const Message& reply) {
  grpc::ByteBuffer buffer;
  bool own = false;
  if (!grpc::SerializationTraits<Message>::Serialize(reply, &buffer, &own)
           .ok()) {
    return false;
  }
  return stream->Write(buffer);
}

}  // namespace

ParameterServerService::ParameterServerService(ParamShard* shard,
                                               const PsServiceOptions& options,
                                               PeerTracker* liveness)
    : shard_(shard), options_(options), liveness_(liveness) {
  MarkMethodStreamed(kPushInitMethod,
                     new RawHandler(&ParameterServerService::RawPushInit, this));
  MarkMethodStreamed(kPushMethod,
                     new RawHandler(&ParameterServerService::RawPush, this));
  MarkMethodStreamed(kPullMethod,
                     new RawHandler(&ParameterServerService::RawPull, this));
}

grpc::Status ParameterServerService::ReceiveChunks(
    grpc::ServerContext* context, RawStream* stream,
    const std::function<absl::Status(const DecodedChunk&)>& accept) {
  if (grpc::Status a = CheckAuthToken(*context, options_.auth_token); !a.ok()) {
    return a;
  }
  grpc::ByteBuffer message;
  DecodedChunk chunk;
  int64_t accepted = 0;
  while (stream->Read(&message)) {
    if (absl::Status d = DecodeChunk(message, &chunk); !d.ok()) {
      return ToGrpcStatus(d);
    }
    if (absl::Status s = accept(chunk); !s.ok()) return ToGrpcStatus(s);
    ++accepted;
  }
  proto::PushReply reply;
  reply.set_chunks_accepted(accepted);
  WriteMessage(stream, reply);
  return grpc::Status::OK;
}

grpc::Status ParameterServerService::RawPushInit(grpc::ServerContext* context,
                                                 RawStream* stream) {
  std::string data;
  return ReceiveChunks(context, stream, [&](const DecodedChunk& chunk) {
    Seen(chunk.header.rank);
    data.clear();
    for (absl::string_view piece : chunk.payload) {
      data.append(piece.data(), piece.size());
    }
    return shard_->PushInit(chunk.header.rank, chunk.header.offset,
                            chunk.header.dtype, data);
  });
}

grpc::Status ParameterServerService::RawPush(grpc::ServerContext* context,
                                             RawStream* stream) {
  return ReceiveChunks(context, stream, [&](const DecodedChunk& chunk) {
    Seen(chunk.header.rank, chunk.header.step);
    return shard_->PushGradient(chunk.header.rank, chunk.header.step,
                                chunk.header.offset, chunk.header.dtype,
                                chunk.payload);
  });
}

grpc::Status ParameterServerService::RawPull(grpc::ServerContext* context,
                                             RawStream* stream) {
  if (grpc::Status a = CheckAuthToken(*context, options_.auth_token); !a.ok()) {
    return a;
  }
  grpc::ByteBuffer message;
  proto::PullRequest request;
  if (!stream->Read(&message)) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "Pull without a request");
  }
  if (!grpc::SerializationTraits<proto::PullRequest>::Deserialize(&message,
                                                                 &request)
           .ok()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "malformed PullRequest");
  }
  Seen(request.rank(), request.version() - 1);
  absl::StatusOr<ParamShard::PullCursor> cursor =
      shard_->StartPull(request.rank(), request.version());
  if (!cursor.ok()) return ToGrpcStatus(cursor.status());
  const absl::Time deadline = DeadlineOf(*context, options_.max_pull_wait);
  ChunkHeader header;
  header.step = request.version();
  while (cursor->remaining > 0) {
    if (context->IsCancelled()) {
      return grpc::Status(grpc::StatusCode::CANCELLED, "pull cancelled");
    }
    absl::Span<const float> data;
    absl::Status s = shard_->NextReadyChunk(
        &*cursor, std::min(deadline, absl::Now() + absl::Seconds(1)),
        &header.offset, &data);
    if (absl::IsDeadlineExceeded(s) && absl::Now() < deadline) continue;
    if (!s.ok()) return ToGrpcStatus(s);
    if (!stream->Write(EncodeChunk(header, data))) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                          "client went away during pull");
    }
  }
  return grpc::Status::OK;
}

grpc::Status ParameterServerService::Finish(grpc::ServerContext* context,
                                            const proto::FinishRequest* request,
                                            proto::FinishReply*) {
  if (grpc::Status a = CheckAuthToken(*context, options_.auth_token); !a.ok()) {
    return a;
  }
  absl::Status s = shard_->Finish(request->rank());
  if (s.ok() && liveness_ != nullptr) liveness_->Forget(request->rank());
  return ToGrpcStatus(s);
}

grpc::Status ParameterServerService::Heartbeat(
    grpc::ServerContext* context, const proto::HeartbeatRequest* request,
    proto::HeartbeatReply* reply) {
  if (grpc::Status a = CheckAuthToken(*context, options_.auth_token); !a.ok()) {
    return a;
  }
  if (absl::Status r = shard_->CheckRank(request->rank()); !r.ok()) {
    return ToGrpcStatus(r);
  }
  Seen(request->rank(), request->step());
  const absl::Status failure = shard_->aborted();
  if (!failure.ok()) reply->set_job_failure(std::string(failure.message()));
  return grpc::Status::OK;
}

void ParameterServerService::Seen(int rank, int64_t step) {
  if (liveness_ != nullptr) liveness_->Seen(rank, absl::Now(), step);
}

}  // namespace ringside

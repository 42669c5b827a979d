#include "server/ps_service.h"

#include <chrono>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/auth.h"
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
    liveness_->Track(r->rank, absl::StrCat("worker rank ", r->rank),
                     absl::Now());
  }
  reply->set_range_begin(range->begin);
  reply->set_range_end(range->end);
  const int64_t resume_step = shard_->resume_step();
  reply->set_resumed(resume_step >= 0);
  reply->set_resume_step(resume_step >= 0 ? resume_step : 0);
  return grpc::Status::OK;
}

grpc::Status ParameterServerService::PushInit(
    grpc::ServerContext* context, grpc::ServerReader<proto::ParamChunk>* reader,
    proto::PushReply* reply) {
  if (grpc::Status a = CheckAuthToken(*context, options_.auth_token); !a.ok()) {
    return a;
  }
  proto::ParamChunk chunk;
  int64_t accepted = 0;
  while (reader->Read(&chunk)) {
    Seen(chunk.rank());
    absl::Status s = shard_->PushInit(chunk.rank(), chunk.offset(),
                                      chunk.dtype(), chunk.data());
    if (!s.ok()) return ToGrpcStatus(s);
    ++accepted;
  }
  reply->set_chunks_accepted(accepted);
  return grpc::Status::OK;
}

grpc::Status ParameterServerService::Push(
    grpc::ServerContext* context, grpc::ServerReader<proto::GradChunk>* reader,
    proto::PushReply* reply) {
  if (grpc::Status a = CheckAuthToken(*context, options_.auth_token); !a.ok()) {
    return a;
  }
  proto::GradChunk chunk;
  int64_t accepted = 0;
  while (reader->Read(&chunk)) {
    Seen(chunk.rank(), chunk.step());
    absl::Status s =
        shard_->PushGradient(chunk.rank(), chunk.step(), chunk.offset(),
                             chunk.dtype(), chunk.data());
    if (!s.ok()) return ToGrpcStatus(s);
    ++accepted;
  }
  reply->set_chunks_accepted(accepted);
  return grpc::Status::OK;
}

grpc::Status ParameterServerService::Pull(
    grpc::ServerContext* context, const proto::PullRequest* request,
    grpc::ServerWriter<proto::ParamChunk>* writer) {
  if (grpc::Status a = CheckAuthToken(*context, options_.auth_token); !a.ok()) {
    return a;
  }
  Seen(request->rank(), request->version() - 1);
  absl::StatusOr<ParamShard::PullCursor> cursor =
      shard_->StartPull(request->rank(), request->version());
  if (!cursor.ok()) return ToGrpcStatus(cursor.status());
  const absl::Time deadline = DeadlineOf(*context, options_.max_pull_wait);
  proto::ParamChunk out;
  out.set_version(request->version());
  out.set_dtype("float32");
  while (cursor->remaining > 0) {
    if (context->IsCancelled()) {
      return grpc::Status(grpc::StatusCode::CANCELLED, "pull cancelled");
    }
    int64_t offset = 0;
    absl::Status s = shard_->NextReadyChunk(
        &*cursor, std::min(deadline, absl::Now() + absl::Seconds(1)), &offset,
        out.mutable_data());
    if (absl::IsDeadlineExceeded(s) && absl::Now() < deadline) continue;
    if (!s.ok()) return ToGrpcStatus(s);
    out.set_offset(offset);
    if (!writer->Write(out)) {
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
  Seen(request->rank(), request->step());
  const absl::Status failure = shard_->aborted();
  if (!failure.ok()) reply->set_job_failure(std::string(failure.message()));
  return grpc::Status::OK;
}

void ParameterServerService::Seen(int rank, int64_t step) {
  if (liveness_ != nullptr) liveness_->Seen(rank, absl::Now(), step);
}

}  // namespace ringside

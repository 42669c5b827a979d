// ParameterServerService: the gRPC edge of one ParamShard. Converts wire
// messages to ParamShard calls and absl::Status to grpc::Status; holds no
// state of its own. Every handler first checks the job's token
// (common/auth.h): a call without it or with another one fails
// UNAUTHENTICATED before touching the shard.
// The bulk methods (PushInit, Push, Pull) take and give raw byte buffers:
// the bytes are protobuf's GradChunk / ParamChunk, but pushes are summed
// straight from the receive buffers and pulls sent straight from the
// shard's parameters (common/chunk_wire.h). They are registered as
// bidirectional streams on the server (gRPC's streamed-method hook), which
// clients of the .proto's client-streaming and server-streaming methods
// cannot tell apart on the wire.
// Thread-safe (gRPC calls handlers concurrently).
#ifndef RINGSIDE_SERVER_PS_SERVICE_H_
#define RINGSIDE_SERVER_PS_SERVICE_H_

#include <functional>
#include <string>

#include "absl/time/time.h"
#include "common/chunk_wire.h"
#include "common/liveness_monitor.h"
#include "proto/parameter_server.grpc.pb.h"
#include "server/param_shard.h"

namespace ringside {

struct PsServiceOptions {
  // Longest a Pull waits for a chunk when the client set no deadline.
  absl::Duration max_pull_wait = absl::Seconds(120);
  // The job's token every call must carry; empty (default): none checked.
  // PsServer sets it from PsServerOptions::security.
  std::string auth_token;
  // This server's shard index and the port of its bulk data path (0:
  // none), told to every worker that registers. PsServer sets them.
  int shard = 0;
  int bulk_port = 0;
};

// The ParamShard registration a RegisterRequest asks for; INVALID_ARGUMENT
// when its layout is malformed. (The shard validates the rest.)
absl::StatusOr<Registration> RegistrationFromProto(
    const proto::RegisterRequest& request);

class ParameterServerService final : public proto::ParameterServer::Service {
 public:
  // `shard` must outlive the service. `liveness` (may be null: no failure
  // detection) learns of every registered rank ("worker rank R"), of every
  // RPC it makes (with its step) and of its Finish; it must outlive the
  // service.
  ParameterServerService(ParamShard* shard, const PsServiceOptions& options,
                         PeerTracker* liveness = nullptr);

  grpc::Status Register(grpc::ServerContext* context,
                        const proto::RegisterRequest* request,
                        proto::RegisterReply* reply) override;
  using RawStream = grpc::ServerReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>;
  // ParamChunk messages in, one PushReply out.
  grpc::Status RawPushInit(grpc::ServerContext* context, RawStream* stream);
  // GradChunk messages in, one PushReply out.
  grpc::Status RawPush(grpc::ServerContext* context, RawStream* stream);
  // One PullRequest in, ParamChunk messages out.
  grpc::Status RawPull(grpc::ServerContext* context, RawStream* stream);
  grpc::Status Finish(grpc::ServerContext* context,
                      const proto::FinishRequest* request,
                      proto::FinishReply* reply) override;
  grpc::Status Heartbeat(grpc::ServerContext* context,
                         const proto::HeartbeatRequest* request,
                         proto::HeartbeatReply* reply) override;

 private:
  // Reads chunk messages until the client half-closes, handing each to
  // `accept` (the first error ends the call with it), then answers with
  // the PushReply counting them. Checks the token first.
  grpc::Status ReceiveChunks(
      grpc::ServerContext* context, RawStream* stream,
      const std::function<absl::Status(const DecodedChunk&)>& accept);
  // A sign of life of `rank` (at `step` when >= 0).
  void Seen(int rank, int64_t step = -1);

  ParamShard* shard_;
  PsServiceOptions options_;
  PeerTracker* liveness_;
};

}  // namespace ringside

#endif  // RINGSIDE_SERVER_PS_SERVICE_H_

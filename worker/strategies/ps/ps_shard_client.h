// PsShardClient: a worker's connection to one parameter server (one shard).
// Wraps the ParameterServer RPCs with deadlines and Status errors that name
// the server. PushInit, Push and Pull send and receive raw byte buffers in
// protobuf's wire format without copying the payload into messages
// (common/chunk_wire.h): a push sends the caller's gradient in place, a pull
// lands each chunk in `params` with one copy. After UseBulkPath, push
// streams and pulls travel over the server's bulk data path instead
// (ps_bulk_client.h: ringside's framing on two persistent TCP connections;
// a pull lands each chunk in `params` straight from the socket); gRPC
// keeps registration, PushInit, heartbeats and Finish. Thread-safe:
// distinct RPCs may run concurrently (e.g. a push stream and a pull stream
// of the same step).
#ifndef RINGSIDE_WORKER_STRATEGIES_PS_PS_SHARD_CLIENT_H_
#define RINGSIDE_WORKER_STRATEGIES_PS_PS_SHARD_CLIENT_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "common/chunk_wire.h"
#include "common/grpc_credentials.h"
#include "common/net_address.h"
#include "core/key_range.h"
#include "proto/parameter_server.grpc.pb.h"
#include "worker/strategies/ps/ps_bulk_client.h"

namespace ringside {

// What a server answers a registration with.
struct Registered {
  KeyRange range;
  // The server continues from a checkpoint at this step (-1: fresh start).
  int64_t resume_step = -1;
  // The server's shard index and the port of its bulk data path (0: none,
  // as when the job uses TLS).
  int shard = 0;
  int bulk_port = 0;
};

class PsShardClient {
 public:
  // Creates the channel with the job's token and TLS settings (every call
  // carries the token); does not connect yet (RPCs wait for the server up
  // to their deadline). Precondition: security.Validate() is OK.
  explicit PsShardClient(const HostPort& server,
                         const GrpcSecurity& security = {});

  const std::string& address() const { return address_; }

  // Registers; returns the server's key range and whether it resumed from
  // a checkpoint. Waits for the server to come
  // up until `deadline`; DEADLINE_EXCEEDED says it was unreachable.
  absl::StatusOr<Registered> Register(const proto::RegisterRequest& request,
                                    absl::Time deadline);

  // Streams `chunks` of `params` as initial values (rank 0 only).
  absl::Status PushInit(int rank, const std::vector<KeyRange>& chunks,
                        absl::Span<const float> params, absl::Time deadline);

  // Routes the push streams and pulls that follow through the server's
  // bulk data path at `endpoint` (its host is this server's; rank, shard,
  // token, range and chunk size filled in by the caller): connects and
  // handshakes a push and a pull connection. Call before any push or pull.
  absl::Status UseBulkPath(const BulkEndpoint& endpoint, absl::Time deadline);
  bool bulk() const { return pull_bulk_ != nullptr; }
  const std::string& host() const { return host_; }

  // One step's gradient push stream. Write chunks in any order, then Close.
  // The gradient memory must stay unchanged until Close returns (the bytes
  // are sent from it). Not thread-safe: one writer thread.
  class PushStream {
   public:
    virtual ~PushStream() = default;
    virtual absl::Status Write(const KeyRange& chunk,
                               absl::Span<const float> grads) = 0;
    virtual absl::Status Close() = 0;
    // Cancels the stream (from any thread).
    virtual void Cancel() = 0;
  };
  std::unique_ptr<PushStream> OpenPush(int rank, int64_t step,
                                       absl::Time deadline);

  // Pulls `version` of every chunk of this server into `params` (the whole
  // flat buffer; chunks land at their offsets), as the server makes them
  // ready. Expects exactly `num_chunks` chunks. Returns payload bytes.
  // `on_chunk` (may be empty) runs on the calling thread once each chunk's
  // elements [offset, offset + elements) are in place (e.g. for a timeline).
  // Cancel() from another thread aborts it.
  using ChunkInPlaceFn = std::function<void(int64_t offset, int64_t elements)>;
  absl::StatusOr<int64_t> Pull(int rank, int64_t version, int num_chunks,
                               absl::Span<float> params, absl::Time deadline,
                               const ChunkInPlaceFn& on_chunk = nullptr);
  void CancelPull();

  absl::Status Finish(int rank, absl::Time deadline);

  // Liveness heartbeat (does not wait for the channel to be ready). Returns
  // the server's job_failure: empty while the job is healthy, else why the
  // server failed it (e.g. a lost worker).
  absl::StatusOr<std::string> Heartbeat(int rank, int64_t step,
                                        absl::Time deadline);

 private:
  friend class GrpcPushStream;
  friend class BulkPushStream;
  absl::Status FromGrpc(const grpc::Status& s, const char* rpc) const;
  // Marks a pull in flight (`context`: its gRPC call; null: the bulk
  // path's), unless CancelPull came first: then CANCELLED, the
  // cancellation consumed. EndPull clears it.
  absl::Status BeginPull(grpc::ClientContext* context);
  void EndPull();

  std::string address_;
  std::string host_;
  GrpcSecurity security_;
  std::shared_ptr<grpc::Channel> channel_;
  // Pulls run on a connection of their own: on one HTTP/2 connection the
  // pull's flow-control updates queue behind the push's bytes in the
  // socket and starve the pull while both stream.
  std::shared_ptr<grpc::Channel> pull_channel_;
  std::unique_ptr<proto::ParameterServer::Stub> stub_;
  // The bulk methods, called with raw byte buffers.
  const grpc::internal::RpcMethod push_init_method_;
  const grpc::internal::RpcMethod push_method_;
  const grpc::internal::RpcMethod pull_method_;

  absl::Mutex pull_mu_;
  grpc::ClientContext* pull_context_ ABSL_GUARDED_BY(pull_mu_) = nullptr;
  bool bulk_pulling_ ABSL_GUARDED_BY(pull_mu_) = false;
  bool pull_cancelled_ ABSL_GUARDED_BY(pull_mu_) = false;
  // The bulk data path (UseBulkPath); one push stream at a time.
  std::unique_ptr<BulkConnection> push_bulk_, pull_bulk_;
  absl::Mutex push_bulk_mu_;
};

// Channel arguments for bulk transfers (large messages).
grpc::ChannelArguments BulkChannelArguments();

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_PS_PS_SHARD_CLIENT_H_

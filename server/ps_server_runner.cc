#include "server/ps_server_runner.h"

#include <glog/logging.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"

namespace ringside {

void AddBulkServerArguments(int max_message_mb, grpc::ServerBuilder* builder) {
  builder->SetMaxReceiveMessageSize(max_message_mb << 20);
  builder->SetMaxSendMessageSize(max_message_mb << 20);
  // Bounded receive windows: a push arriving faster than the shard sums it
  // waits in the worker's socket, not in this process. With gRPC's
  // bandwidth-delay probing the HTTP/2 windows grew until every worker's
  // whole push could sit here: sps, N = 4, a 68 MB model peaked at 702 MB
  // (10x the model); with 8 MiB windows (two default chunks) at 340 MB
  // (5x). The price, measured with transport_bench on loopback: 64 MiB
  // push + pull goodput 0.58x -> 0.46x a TCP stream with one worker, 0.52x
  // -> 0.47x with four; 4 MiB unchanged.
  builder->AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  builder->AddChannelArgument(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 8 << 20);
}

absl::StatusOr<std::unique_ptr<PsServer>> PsServer::Start(
    const PsServerOptions& options) {
  RS_RETURN_IF_ERROR(options.shard.Validate());
  if (options.port < 0 || options.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("port must be 0..65535, got ", options.port));
  }
  if (options.max_message_mb < 1) {
    return absl::InvalidArgumentError("max_message_mb must be >= 1");
  }
  RS_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> credentials,
                      MakeServerCredentials(options.security));
  std::unique_ptr<PsServer> ps(new PsServer);
  ps->shard_ = std::make_unique<ParamShard>(options.shard);
  if (options.resume) {
    if (options.shard.checkpoint_dir.empty()) {
      return absl::InvalidArgumentError("resume needs a checkpoint_dir");
    }
    RS_ASSIGN_OR_RETURN(
        Checkpoint checkpoint,
        ReadCheckpointFile(ShardCheckpointPath(options.shard.checkpoint_dir,
                                               options.shard.shard,
                                               options.shard.num_shards)));
    RS_RETURN_IF_ERROR(ps->shard_->Resume(std::move(checkpoint)));
  }
  PsServiceOptions service = options.service;
  service.auth_token = options.security.auth_token;
  PeerTracker* tracker = nullptr;
  if (options.failure_timeout != absl::InfiniteDuration()) {
    LivenessOptions liveness;
    liveness.failure_timeout = options.failure_timeout;
    ParamShard* shard = ps->shard_.get();
    const int index = options.shard.shard;
    liveness.on_verdict = [shard, index](const std::string& verdict) {
      LOG(ERROR) << "parameter server shard " << index << ": " << verdict
                 << "; failing the job";
      shard->Abort(absl::UnavailableError(verdict));
    };
    RS_ASSIGN_OR_RETURN(ps->liveness_,
                        LivenessMonitor::Start(liveness, /*source=*/nullptr));
    tracker = &ps->liveness_->tracker();
  }
  service.shard = options.shard.shard;
  if (options.bulk_port >= 0 && !options.security.tls) {
    BulkServerOptions bulk;
    bulk.host = options.host;
    bulk.port = options.bulk_port;
    bulk.shard = options.shard.shard;
    bulk.auth_token = options.security.auth_token;
    bulk.max_pull_wait = options.service.max_pull_wait;
    std::function<void(int, int64_t)> seen;
    if (tracker != nullptr) {
      seen = [tracker](int rank, int64_t step) {
        tracker->Seen(rank, absl::Now(), step);
      };
    }
    RS_ASSIGN_OR_RETURN(ps->bulk_,
                        BulkServer::Start(ps->shard_.get(), bulk, seen));
    service.bulk_port = ps->bulk_->port();
  }
  ps->service_ = std::make_unique<ParameterServerService>(ps->shard_.get(),
                                                          service, tracker);
  const std::string address =
      options.host.find(':') != std::string::npos
          ? absl::StrCat("[", options.host, "]:", options.port)
          : absl::StrCat(options.host, ":", options.port);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, credentials, &ps->port_);
  AddBulkServerArguments(options.max_message_mb, &builder);
  builder.RegisterService(ps->service_.get());
  ps->server_ = builder.BuildAndStart();
  if (ps->server_ == nullptr || ps->port_ == 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot listen on ", address,
        options.security.tls ? " (or gRPC refused the TLS certificate/key)"
                             : ""));
  }
  return ps;
}

void PsServer::Shutdown(absl::Duration grace) {
  if (server_ != nullptr) {
    server_->Shutdown(absl::ToChronoTime(absl::Now() + grace));
  }
}

PsServer::~PsServer() {
  Shutdown(absl::Seconds(2));
  if (bulk_ != nullptr) bulk_->Shutdown();
  if (liveness_ != nullptr) liveness_->Stop();
}

}  // namespace ringside

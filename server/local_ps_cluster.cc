#include "server/local_ps_cluster.h"

#include "common/status_macros.h"

namespace ringside {

absl::StatusOr<std::unique_ptr<LocalPsCluster>> LocalPsCluster::Start(
    int num_shards, int num_workers, absl::Duration max_pull_wait) {
  std::unique_ptr<LocalPsCluster> cluster(new LocalPsCluster);
  for (int i = 0; i < num_shards; ++i) {
    PsServerOptions options;
    options.host = "127.0.0.1";
    options.shard = {num_workers, i, num_shards};
    options.service.max_pull_wait = max_pull_wait;
    RS_ASSIGN_OR_RETURN(std::unique_ptr<PsServer> server,
                        PsServer::Start(options));
    cluster->addresses_.push_back({"127.0.0.1", server->port()});
    cluster->servers_.push_back(std::move(server));
  }
  return cluster;
}

}  // namespace ringside

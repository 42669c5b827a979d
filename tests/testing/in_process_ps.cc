#include "tests/testing/in_process_ps.h"

#include "common/status_macros.h"

namespace ringside::testing {

absl::StatusOr<std::unique_ptr<InProcessPs>> InProcessPs::Start(
    int num_shards, int num_workers) {
  std::unique_ptr<InProcessPs> ps(new InProcessPs);
  for (int i = 0; i < num_shards; ++i) {
    PsServerOptions options;
    options.host = "127.0.0.1";
    options.shard.num_workers = num_workers;
    options.shard.shard = i;
    options.shard.num_shards = num_shards;
    options.service.max_pull_wait = absl::Seconds(30);
    RS_ASSIGN_OR_RETURN(std::unique_ptr<PsServer> server,
                        PsServer::Start(options));
    ps->addresses_.push_back({"127.0.0.1", server->port()});
    ps->servers_.push_back(std::move(server));
  }
  return ps;
}

}  // namespace ringside::testing

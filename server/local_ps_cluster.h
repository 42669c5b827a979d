// LocalPsCluster: K parameter-server shards served on 127.0.0.1 inside this
// process, on ports the OS picks — the servers of in-process tests and
// benchmarks. Thread-compatible; the servers shut down in the destructor.
#ifndef RINGSIDE_SERVER_LOCAL_PS_CLUSTER_H_
#define RINGSIDE_SERVER_LOCAL_PS_CLUSTER_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/net_address.h"
#include "server/ps_server_runner.h"

namespace ringside {

class LocalPsCluster {
 public:
  // Starts shards 0..num_shards-1 of a job with num_workers workers; a pull
  // waits at most max_pull_wait. INVALID_ARGUMENT on bad counts.
  static absl::StatusOr<std::unique_ptr<LocalPsCluster>> Start(
      int num_shards, int num_workers, absl::Duration max_pull_wait);

  // Addresses in shard order (SyncOptions::servers).
  const std::vector<HostPort>& addresses() const { return addresses_; }
  ParamShard& shard(int i) { return servers_[i]->shard(); }

 private:
  LocalPsCluster() = default;
  std::vector<std::unique_ptr<PsServer>> servers_;
  std::vector<HostPort> addresses_;
};

}  // namespace ringside

#endif  // RINGSIDE_SERVER_LOCAL_PS_CLUSTER_H_

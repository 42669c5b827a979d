// InProcessPs: K parameter servers on loopback ports picked by the OS,
// inside the test process. testonly. Thread-compatible; the servers shut
// down in the destructor.
#ifndef RINGSIDE_TESTS_TESTING_IN_PROCESS_PS_H_
#define RINGSIDE_TESTS_TESTING_IN_PROCESS_PS_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "common/net_address.h"
#include "server/ps_server_runner.h"

namespace ringside::testing {

class InProcessPs {
 public:
  static absl::StatusOr<std::unique_ptr<InProcessPs>> Start(int num_shards,
                                                            int num_workers);

  const std::vector<HostPort>& addresses() const { return addresses_; }
  ParamShard& shard(int i) { return servers_[i]->shard(); }

 private:
  InProcessPs() = default;
  std::vector<std::unique_ptr<PsServer>> servers_;
  std::vector<HostPort> addresses_;
};

}  // namespace ringside::testing

#endif  // RINGSIDE_TESTS_TESTING_IN_PROCESS_PS_H_

// Store: the job's rendezvous key-value store (the torchrun
// MASTER_ADDR:MASTER_PORT picture). Rank 0 serves it over gRPC; every rank
// uses it for Gloo rendezvous, the NCCL unique id, barriers and heartbeats.
// Values are bytes; keys are strings. Set overwrites. Get and Wait block
// until the keys exist or the timeout passes: DEADLINE_EXCEEDED names the
// missing keys. Implementations are thread-safe.
#ifndef RINGSIDE_COLLECTIVES_STORE_H_
#define RINGSIDE_COLLECTIVES_STORE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ringside {

class Store {
 public:
  virtual ~Store() = default;
  virtual absl::Status Set(absl::string_view key, absl::string_view value) = 0;
  virtual absl::StatusOr<std::string> Get(absl::string_view key,
                                          absl::Duration timeout) = 0;
  virtual absl::Status Wait(const std::vector<std::string>& keys,
                            absl::Duration timeout) = 0;
  // Atomically adds `delta` to the integer at key (missing = 0); returns the
  // new value. For barriers and counters.
  virtual absl::StatusOr<int64_t> Add(absl::string_view key, int64_t delta) = 0;
};

}  // namespace ringside

#endif  // RINGSIDE_COLLECTIVES_STORE_H_

// AsyncPsOptions: async_ps's bounded staleness. Its flag (--staleness) is
// defined once, in async_ps_options.cc, for the worker and predict; the
// study's setting (τ = 2) is async_ps's study flag in its registration.
#ifndef RINGSIDE_WORKER_STRATEGIES_PS_ASYNC_PS_OPTIONS_H_
#define RINGSIDE_WORKER_STRATEGIES_PS_ASYNC_PS_OPTIONS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ringside {

struct AsyncPsOptions {
  // Bounded staleness τ (versions): a worker at step t may compute with
  // parameters of any version >= t - τ; 0 = fully synchronous (as sps).
  int staleness = 0;

  absl::Status Validate() const;
};

// --staleness.
absl::StatusOr<AsyncPsOptions> AsyncPsOptionsFromFlags();

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_PS_ASYNC_PS_OPTIONS_H_

// The job binaries' flags, defined once for every launcher (launch,
// compare, staleness_sweep, soak_bench): --worker_bin and --ps_server_bin,
// each defaulting to the binary in this program's runfiles.
#ifndef RINGSIDE_EXPERIMENTS_JOB_JOB_BINARIES_H_
#define RINGSIDE_EXPERIMENTS_JOB_JOB_BINARIES_H_

#include <string>

#include "absl/status/statusor.h"

namespace ringside {

// --worker_bin, else worker/worker in the runfiles of `argv0`; NOT_FOUND
// saying to pass --worker_bin when neither is there.
absl::StatusOr<std::string> WorkerBinary(const char* argv0);
// --ps_server_bin, else server/ps_server likewise.
absl::StatusOr<std::string> PsServerBinary(const char* argv0);

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_JOB_JOB_BINARIES_H_

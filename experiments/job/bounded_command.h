// Runs one command to completion or a timeout, collecting its stderr: the
// ip/tc commands of network namespaces (netns_topology.h) and their
// teardown.
#ifndef RINGSIDE_EXPERIMENTS_JOB_BOUNDED_COMMAND_H_
#define RINGSIDE_EXPERIMENTS_JOB_BOUNDED_COMMAND_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace ringside {

// Runs `argv` (argv[0] found on $PATH; stdin and stdout /dev/null) with
// `timeout` (then SIGKILL), blocking: OK on exit code 0, otherwise an error
// with the command and its stderr (DEADLINE_EXCEEDED when killed at the
// timeout, NOT_FOUND when it cannot start). NetnsTopology's default runner.
absl::Status RunBoundedCommand(const std::vector<std::string>& argv,
                               absl::Duration timeout);

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_JOB_BOUNDED_COMMAND_H_

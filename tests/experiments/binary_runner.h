// Runs the `launch` and `compare` binaries (runfiles of the test) against
// the fake ps_server / worker scripts, collecting their stdout lines.
#ifndef RINGSIDE_TESTS_EXPERIMENTS_BINARY_RUNNER_H_
#define RINGSIDE_TESTS_EXPERIMENTS_BINARY_RUNNER_H_

#include <errno.h>

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "experiments/job/local_job.h"
#include "experiments/job/process_group.h"
#include "gtest/gtest.h"

namespace ringside {

inline std::string Runfile(const std::string& path) {
  absl::StatusOr<std::string> found = FindBinary(program_invocation_name, path);
  EXPECT_TRUE(found.ok()) << found.status();
  return found.ok() ? *found : "";
}

struct Outcome {
  absl::Status status;
  std::vector<std::string> stdout_lines;
};

// Runs `binary` with the fake scripts and `args`; stderr is relayed. The
// deadline only catches a hang: compare's cost-model calibration alone
// takes 15-20 s on two busy cores.
inline Outcome RunBinary(const std::string& binary,
                         std::vector<std::string> args,
                         const std::vector<std::string>& env = {}) {
  ProcessGroupOptions options;
  options.deadline = absl::Seconds(90);
  ProcessGroup group(options);
  Outcome outcome;
  ChildSpec spec;
  spec.label = binary;
  spec.argv = {
      Runfile("experiments/" + binary),
      "--ps_server_bin=" + Runfile("tests/experiments/fake_ps_server.sh"),
      "--worker_bin=" + Runfile("tests/experiments/fake_worker.sh")};
  // No PyTorch DDP row unless a test asks for the stand-in peer, and the
  // training run alone unless a test asks for timing runs (later flags
  // win).
  if (binary == "compare") {
    spec.argv.push_back("--torch_python=/no/such/python");
    spec.argv.push_back("--repeats=0");
  }
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = env;
  spec.on_stdout_line = [&](const std::string&, absl::string_view line) {
    outcome.stdout_lines.emplace_back(line);
  };
  absl::StatusOr<int> id = group.Start(std::move(spec));
  outcome.status = id.ok() ? group.Wait() : id.status();
  return outcome;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace ringside

#endif  // RINGSIDE_TESTS_EXPERIMENTS_BINARY_RUNNER_H_

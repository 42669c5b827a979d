#include "experiments/job/job_binaries.h"

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "experiments/job/local_job.h"

ABSL_FLAG(std::string, worker_bin, "",
          "worker binary; default: worker/worker from the runfiles.");
ABSL_FLAG(std::string, ps_server_bin, "",
          "ps_server binary; default: server/ps_server from the runfiles.");

namespace ringside {
namespace {

absl::StatusOr<std::string> Binary(const std::string& flag_value,
                                   const char* argv0, const char* path,
                                   const char* flag_name) {
  if (!flag_value.empty()) return flag_value;
  absl::StatusOr<std::string> found = FindBinary(argv0, path);
  if (!found.ok()) {
    return absl::NotFoundError(absl::StrCat(found.status().message(),
                                            "; pass --", flag_name, "=PATH"));
  }
  return found;
}

}  // namespace

absl::StatusOr<std::string> WorkerBinary(const char* argv0) {
  return Binary(absl::GetFlag(FLAGS_worker_bin), argv0, "worker/worker",
                "worker_bin");
}

absl::StatusOr<std::string> PsServerBinary(const char* argv0) {
  return Binary(absl::GetFlag(FLAGS_ps_server_bin), argv0, "server/ps_server",
                "ps_server_bin");
}

}  // namespace ringside

#include "experiments/comparison/worker_args.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "experiments/presets.h"

namespace ringside::compare {

std::vector<std::string> ExtraWorkerArgs(
    const WorkloadOptions& workload, const std::vector<std::string>& extra) {
  std::vector<std::string> args =
      absl::StrSplit(workload.worker_args, ' ', absl::SkipWhitespace());
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::vector<std::string> WorkerArgs(const WorkloadOptions& workload,
                                    const TrainingFlags& training,
                                    const std::vector<std::string>& extra) {
  std::vector<std::string> args = {
      absl::StrCat("--model=", workload.model),
      absl::StrCat("--batch_size=", workload.batch_size),
      absl::StrCat("--steps=", workload.steps),
      absl::StrCat("--warmup_steps=", workload.warmup_steps),
      absl::StrCat("--eval_every=", workload.eval_every),
      absl::StrCat("--failure_timeout_s=", workload.failure_timeout_s)};
  if (workload.model == "synthetic") {
    args.push_back(absl::StrCat("--profile=", workload.profile));
    args.push_back(
        absl::StrCat("--emulated_compute_ms=", workload.emulated_compute_ms));
    if (workload.emulation_scale != 1) {
      args.push_back(
          absl::StrCat("--emulation_scale=", workload.emulation_scale));
    }
  }
  if (workload.device != "cpu") {
    args.push_back(absl::StrCat("--device=", workload.device));
  }
  const std::vector<std::string> flags = training.WorkerArgs();
  args.insert(args.end(), flags.begin(), flags.end());
  const std::vector<std::string> more = ExtraWorkerArgs(workload, extra);
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

std::optional<std::string> WorkerFlag(
    const std::vector<std::string>& worker_args, const char* name) {
  std::vector<std::string> args = {"worker"};
  args.insert(args.end(), worker_args.begin(), worker_args.end());
  return FlagValue(args, name);
}

}  // namespace ringside::compare

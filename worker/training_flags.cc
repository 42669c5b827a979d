#include "worker/training_flags.h"

#include <utility>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

ABSL_FLAG(int64_t, accumulate_steps, 1,
          "Gradient accumulation: forward/backward passes per step, each on "
          "the per-worker batch, before one synchronization (>= 1).");
ABSL_FLAG(std::string, lr_scaling, "none",
          "Scale the workers' --lr with the global batch G = workers x "
          "batch x --accumulate_steps: none, linear (lr x G / reference) or "
          "sqrt (lr x sqrt(G / reference)).");
ABSL_FLAG(int64_t, lr_reference_batch, 0,
          "The batch the learning rate was tuned for (--lr_scaling); 0: the "
          "per-worker batch.");
ABSL_FLAG(int64_t, lr_warmup_steps, 0,
          "Linear learning-rate warm-up over the first N updates, wherever "
          "the optimizer runs (workers, parameter servers); 0: none.");
ABSL_FLAG(std::string, slow_ranks, "",
          "Stragglers: RANK:FACTOR[,...] stretches those ranks' compute by "
          "FACTOR (> 0) in every step.");
ABSL_FLAG(double, compute_jitter, 0,
          "Stragglers: every rank's compute varies by up to ±J (in [0, 1)) "
          "per step, seeded.");

namespace ringside {

absl::StatusOr<TrainingFlags> TrainingFlagsFromFlags(int max_workers) {
  TrainingFlags f;
  f.accumulate_steps = absl::GetFlag(FLAGS_accumulate_steps);
  if (f.accumulate_steps < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--accumulate_steps must be >= 1, got ", f.accumulate_steps));
  }
  absl::StatusOr<LrScaling> rule =
      ParseLrScaling(absl::GetFlag(FLAGS_lr_scaling));
  if (!rule.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--lr_scaling: ", rule.status().message()));
  }
  f.lr_scaling = *rule;
  f.lr_reference_batch = absl::GetFlag(FLAGS_lr_reference_batch);
  if (f.lr_reference_batch < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--lr_reference_batch must be >= 0 (0: the per-worker "
                     "batch), got ",
                     f.lr_reference_batch));
  }
  f.lr_warmup_steps = absl::GetFlag(FLAGS_lr_warmup_steps);
  if (f.lr_warmup_steps < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--lr_warmup_steps must be >= 0, got ", f.lr_warmup_steps));
  }
  f.slow_ranks = absl::GetFlag(FLAGS_slow_ranks);
  absl::StatusOr<Stragglers> stragglers =
      ParseStragglers(f.slow_ranks, absl::GetFlag(FLAGS_compute_jitter),
                      max_workers, /*seed=*/1);
  if (!stragglers.ok()) return stragglers.status();
  f.stragglers = *std::move(stragglers);
  return f;
}

std::vector<std::string> TrainingFlags::WorkerArgs() const {
  std::vector<std::string> args;
  if (accumulate_steps != 1) {
    args.push_back(absl::StrCat("--accumulate_steps=", accumulate_steps));
  }
  if (lr_scaling != LrScaling::kNone) {
    args.push_back(absl::StrCat("--lr_scaling=", LrScalingName(lr_scaling)));
  }
  if (lr_reference_batch != 0) {
    args.push_back(absl::StrCat("--lr_reference_batch=", lr_reference_batch));
  }
  if (lr_warmup_steps != 0) {
    args.push_back(absl::StrCat("--lr_warmup_steps=", lr_warmup_steps));
  }
  if (!slow_ranks.empty()) {
    args.push_back(absl::StrCat("--slow_ranks=", slow_ranks));
  }
  if (stragglers.compute_jitter != 0) {
    args.push_back(
        absl::StrCat("--compute_jitter=", stragglers.compute_jitter));
  }
  return args;
}

std::string TrainingFlags::Describe() const {
  std::vector<std::string> parts;
  if (accumulate_steps != 1) {
    parts.push_back(absl::StrCat(accumulate_steps,
                                 " forward/backward passes per step (gradient "
                                 "accumulation, one synchronization)"));
  }
  if (lr_scaling != LrScaling::kNone) {
    parts.push_back(absl::StrCat(
        "learning rate scaled ", LrScalingName(lr_scaling), " with the global "
        "batch from ",
        lr_reference_batch > 0 ? absl::StrCat("batch ", lr_reference_batch)
                               : "the per-worker batch"));
  }
  if (lr_warmup_steps != 0) {
    parts.push_back(
        absl::StrCat("linear learning-rate warm-up over ", lr_warmup_steps,
                     " updates"));
  }
  if (stragglers.any()) {
    parts.push_back(absl::StrCat("STRAGGLERS: ", stragglers.Describe(),
                                 " (compute stretched on purpose)"));
  }
  return absl::StrJoin(parts, "; ");
}

}  // namespace ringside

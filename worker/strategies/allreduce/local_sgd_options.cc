#include "worker/strategies/allreduce/local_sgd_options.h"

#include <cmath>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "worker/strategy_option_set.h"

ABSL_FLAG(int64_t, local_steps, ringside::LocalSgdOptions().local_steps,
          "local_sgd, diloco: local optimizer steps between parameter "
          "averages (H; 1: every step).");
ABSL_FLAG(int64_t, local_sgd_warmup_steps,
          ringside::LocalSgdOptions().warmup_steps,
          "local_sgd, diloco: exact steps first, their gradients "
          "all-reduced (post-local SGD's warm-up).");
ABSL_FLAG(double, diloco_outer_lr, ringside::DiLoCoOptions().outer_lr,
          "diloco: the outer Nesterov SGD's learning rate (the paper's 0.7).");
ABSL_FLAG(double, diloco_outer_momentum,
          ringside::DiLoCoOptions().outer_momentum,
          "diloco: the outer Nesterov SGD's momentum (the paper's 0.9).");

namespace ringside {

absl::Status LocalSgdOptions::Validate() const {
  if (local_steps < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--local_steps must be >= 1, got ", local_steps));
  }
  if (warmup_steps < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--local_sgd_warmup_steps must be >= 0, got ", warmup_steps));
  }
  return absl::OkStatus();
}

absl::Status DiLoCoOptions::Validate() const {
  if (!(outer_lr > 0) || !std::isfinite(outer_lr)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--diloco_outer_lr must be > 0 and finite, got ", outer_lr));
  }
  if (!(outer_momentum >= 0 && outer_momentum < 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--diloco_outer_momentum must be in [0, 1), got ", outer_momentum));
  }
  return absl::OkStatus();
}

absl::StatusOr<LocalSgdOptions> LocalSgdOptionsFromFlags() {
  LocalSgdOptions options;
  options.local_steps = absl::GetFlag(FLAGS_local_steps);
  options.warmup_steps = absl::GetFlag(FLAGS_local_sgd_warmup_steps);
  return ValidatedFromFlags(options, "local_sgd, diloco");
}

absl::StatusOr<DiLoCoOptions> DiLoCoOptionsFromFlags() {
  DiLoCoOptions options;
  options.outer_lr = absl::GetFlag(FLAGS_diloco_outer_lr);
  options.outer_momentum = absl::GetFlag(FLAGS_diloco_outer_momentum);
  return ValidatedFromFlags(options, "diloco");
}

RINGSIDE_REGISTER_OPTION_FLAGS(LocalSgdOptions, LocalSgdOptionsFromFlags);
RINGSIDE_REGISTER_OPTION_FLAGS(DiLoCoOptions, DiLoCoOptionsFromFlags);

}  // namespace ringside

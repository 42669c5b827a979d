#include "worker/strategies/allreduce/powersgd_options.h"

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "worker/strategy_option_set.h"

ABSL_FLAG(int32_t, powersgd_rank, ringside::PowerSgdOptions().rank,
          "ring_powersgd: rank r of each gradient matrix's low-rank "
          "approximation (the paper's recommended 2).");
ABSL_FLAG(int64_t, powersgd_start_step, ringside::PowerSgdOptions().start_step,
          "ring_powersgd: steps averaged with a plain all-reduce before "
          "compression starts (PyTorch's start_powerSGD_iter).");
ABSL_FLAG(double, powersgd_min_compression_rate,
          ringside::PowerSgdOptions().min_compression_rate,
          "ring_powersgd: compress a rows x cols matrix only when "
          "rows*cols >= this x r*(rows + cols) (0: every matrix).");
ABSL_FLAG(bool, powersgd_warm_start, ringside::PowerSgdOptions().warm_start,
          "ring_powersgd: start each power iteration from the previous "
          "step's Q.");

namespace ringside {

absl::Status PowerSgdOptions::Validate() const {
  if (rank < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--powersgd_rank must be >= 1, got ", rank));
  }
  if (start_step < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--powersgd_start_step must be >= 0, got ", start_step));
  }
  if (!(min_compression_rate >= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--powersgd_min_compression_rate must be >= 0, got ",
                     min_compression_rate));
  }
  return absl::OkStatus();
}

absl::StatusOr<PowerSgdOptions> PowerSgdOptionsFromFlags() {
  PowerSgdOptions options;
  options.rank = absl::GetFlag(FLAGS_powersgd_rank);
  options.start_step = absl::GetFlag(FLAGS_powersgd_start_step);
  options.min_compression_rate =
      absl::GetFlag(FLAGS_powersgd_min_compression_rate);
  options.warm_start = absl::GetFlag(FLAGS_powersgd_warm_start);
  return ValidatedFromFlags(options, "ring_powersgd");
}

RINGSIDE_REGISTER_OPTION_FLAGS(PowerSgdOptions, PowerSgdOptionsFromFlags);

}  // namespace ringside

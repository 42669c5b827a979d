// CompressionStartOptions: the plain steps before ring_topk's, ring_sign's
// and ring_onebit_adam's compression starts (gather_hook.h), the exact
// warm-up that Deep Gradient Compression (Lin et al., ICLR 2018: its
// sparsity warm-up) and 1-bit Adam (Tang et al., ICML 2021: its
// full-precision warm-up, freeze_step) run before compressing, because
// early training is the most sensitive to inaccurate gradients. Its flag, --compression_start_step,
// is defined once, in compression_start_options.cc; ring_powersgd has its
// own (--powersgd_start_step, PyTorch's name).
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_COMPRESSION_START_OPTIONS_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_COMPRESSION_START_OPTIONS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ringside {

struct CompressionStartOptions {
  // Steps (per bucket, from the run's first) averaged with a plain float32
  // all-reduce before compression starts; the error feedback starts with
  // the compression. >= 0; 0: compress from the first step.
  int64_t start_step = 0;

  absl::Status Validate() const;
};

absl::StatusOr<CompressionStartOptions> CompressionStartOptionsFromFlags();

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_COMPRESSION_START_OPTIONS_H_

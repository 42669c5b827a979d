// PowerSgdOptions: ring_powersgd's low-rank compression (Vogels et al.,
// "PowerSGD: Practical Low-Rank Gradient Compression for Distributed
// Optimization", NeurIPS 2019; PyTorch DDP's powerSGD_hook). Its flags
// (--powersgd_rank, --powersgd_start_step, --powersgd_min_compression_rate,
// --powersgd_warm_start) are defined once, in powersgd_options.cc.
// Defaults are the paper's recommended setting: rank 2, warm start, error
// feedback (always on), compression from the first step; PyTorch's
// min_compression_rate of 2.
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_POWERSGD_OPTIONS_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_POWERSGD_OPTIONS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ringside {

struct PowerSgdOptions {
  // r: columns of each low-rank factor, at most min(rows, cols) of each
  // matrix (PyTorch clamps it so too). >= 1.
  int rank = 2;
  // Steps (per bucket, from the run's first) averaged with a plain float32
  // all-reduce before compression starts (PyTorch's start_powerSGD_iter).
  // >= 0.
  int64_t start_step = 0;
  // A matrix of rows x cols is compressed only when rows·cols >= this ×
  // r·(rows + cols) (PyTorch's min_compression_rate; 0: every matrix,
  // which the oracle uses to check full rank); vectors (biases, norms)
  // never are. >= 0.
  double min_compression_rate = 2.0;
  // Keep each matrix's Q from the previous step as the next power
  // iteration's start (the paper's warm start); false: a fresh seeded
  // random Q every step.
  bool warm_start = true;

  absl::Status Validate() const;
};

absl::StatusOr<PowerSgdOptions> PowerSgdOptionsFromFlags();

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_POWERSGD_OPTIONS_H_

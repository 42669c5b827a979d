// LocalSgdOptions and DiLoCoOptions: the periodic-averaging strategies'
// settings (local_sgd_strategy.h). Their flags are defined once, in
// local_sgd_options.cc:
//   --local_steps=H              local optimizer steps between averages
//                                (local_sgd and diloco), default 8;
//   --local_sgd_warmup_steps=W   exact steps first (gradients all-reduced
//                                every step: Lin et al.'s post-local SGD),
//                                default 0;
//   --diloco_outer_lr, --diloco_outer_momentum   DiLoCo's outer Nesterov
//                                SGD, default 0.7 and 0.9 (the paper's).
// The papers' own H: DiLoCo (Douillard et al. 2023) 500 inner steps over
// runs of about 88 000 steps; post-local SGD (Lin et al., ICLR 2020) H = 16
// after its warm-up. H = 8 by default here, because compare's runs are
// tens of steps long and H = 500 would never average in them; every
// report row names H.
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_LOCAL_SGD_OPTIONS_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_LOCAL_SGD_OPTIONS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ringside {

struct LocalSgdOptions {
  // H: local steps per round; the parameters are averaged after every H-th
  // step after the warm-up. >= 1 (1: averaged every step).
  int64_t local_steps = 8;
  // Steps at the run's start whose gradients are all-reduced before the
  // optimizer (exact, as ring), before the local rounds begin. >= 0.
  int64_t warmup_steps = 0;

  absl::Status Validate() const;
};

struct DiLoCoOptions {
  // The outer optimizer: Nesterov-momentum SGD on the averaged outer
  // gradient (the global parameters minus the workers' mean). lr > 0,
  // momentum in [0, 1).
  double outer_lr = 0.7;
  double outer_momentum = 0.9;

  absl::Status Validate() const;
};

absl::StatusOr<LocalSgdOptions> LocalSgdOptionsFromFlags();
absl::StatusOr<DiLoCoOptions> DiLoCoOptionsFromFlags();

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_LOCAL_SGD_OPTIONS_H_

// TopkOptions: ring_topk's sparsification (topk_hook.h). Its flag,
// --topk_ratio, is defined once, in topk_options.cc. The default keeps 1%
// of each tensor's elements, the setting of Stich et al.'s sparsified SGD
// with memory (NeurIPS 2018); Deep Gradient Compression (Lin et al., ICLR
// 2018) keeps 0.1% with momentum correction and a sparsity warm-up, which
// this hook does not do.
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_TOPK_OPTIONS_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_TOPK_OPTIONS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ringside {

struct TopkOptions {
  // The share of each tensor's elements sent per step, in (0, 1]: k =
  // max(1, ⌈ratio · size⌉) per tensor; 1 sends every element (the
  // compression off).
  double ratio = 0.01;

  absl::Status Validate() const;
};

absl::StatusOr<TopkOptions> TopkOptionsFromFlags();

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_TOPK_OPTIONS_H_

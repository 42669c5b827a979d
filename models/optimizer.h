// Optimizers: element-wise update rules shared by workers (local apply) and
// parameter servers (apply per shard, per chunk). Because every rule is
// element-wise, applying it chunk by chunk equals applying it at once.
//
// An Optimizer owns the state (momentum, Adam moments) for `num_elements`
// parameters; Apply takes an element offset into that state. Apply on
// disjoint ranges may run concurrently; on the same range it is not
// thread-safe.
#ifndef RINGSIDE_MODELS_OPTIMIZER_H_
#define RINGSIDE_MODELS_OPTIMIZER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/optimizer_config.h"

namespace ringside {

class Optimizer {
 public:
  virtual ~Optimizer() = default;

  // Creates the optimizer named by config.type with zeroed state for
  // `num_elements` parameters. INVALID_ARGUMENT on a bad config.
  static absl::StatusOr<std::unique_ptr<Optimizer>> Create(
      const OptimizerConfig& config, int64_t num_elements);

  // One update of params[i] from grads[i], i.e. state elements
  // [state_offset, state_offset + params.size()). `step` counts updates
  // from 1 (Adam's bias correction). Requires params.size() == grads.size().
  virtual void Apply(int64_t state_offset, absl::Span<float> params,
                     absl::Span<const float> grads, int64_t step) = 0;

  // Bytes of optimizer state (for memory reports).
  virtual int64_t state_bytes() const = 0;

  // The state buffers (SGD: velocity, if momentum != 0; Adam: m, v), each
  // num_elements long, for checkpoints.
  virtual std::vector<absl::Span<float>> StateBuffers() = 0;
};

// The state buffers concatenated (checkpoint payload).
std::vector<float> ExportOptimizerState(Optimizer& optimizer);
// Inverse of ExportOptimizerState; INVALID_ARGUMENT (state unchanged) when
// `state` has the wrong length for this optimizer.
absl::Status ImportOptimizerState(Optimizer& optimizer,
                                  absl::Span<const float> state);

}  // namespace ringside

#endif  // RINGSIDE_MODELS_OPTIMIZER_H_

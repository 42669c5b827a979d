// The arithmetic of PowerSGD's hook (powersgd_hook.cc) on one gradient
// matrix M (rows × cols, row-major, as the flat buffer holds it) with its
// factors P (rows × r) and Q (cols × r), both row-major, and the bucket's
// error-feedback memory:
//   AddError     g += e, then e = g (the input, kept until the result)
//   TakeResult   e -= g (the input less what was written: the next error)
//   Project      P = M·Q
//   BackProject  Q = Mᵀ·P, evaluated as (Pᵀ·M)ᵀ, which streams M's rows:
//                Eigen's Mᵀ·P on a row-major M strides down its columns,
//                3.6× slower at 1024 × 1024 and 2.9× at 768 × 3072 on the
//                development VM, where a row of 4 KiB aliases in the cache
//   Reconstruct  M = P·Qᵀ
// Vectorized (Eigen). The hook runs them, and the calibration times them
// (experiments/calibration/calibration.h). Outputs must not alias inputs.
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_POWERSGD_KERNELS_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_POWERSGD_KERNELS_H_

#include <Eigen/Dense>
#include <cstdint>

#include "absl/types/span.h"

namespace ringside {

using RowMajorMatrix =
    Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowMajorMap = Eigen::Map<RowMajorMatrix>;

// g and e of the same size.
void AddError(absl::Span<float> g, absl::Span<float> e);
void TakeResult(absl::Span<const float> g, absl::Span<float> e);

void LowRankProject(const RowMajorMap& m, const RowMajorMap& q,
                    RowMajorMap p);
// `scratch` holds Pᵀ·M (r × cols) between the product and its transpose.
void LowRankBackProject(const RowMajorMap& m, const RowMajorMap& p,
                        RowMajorMap q, RowMajorMatrix& scratch);
void LowRankReconstruct(const RowMajorMap& p, const RowMajorMap& q,
                        RowMajorMap m);

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_POWERSGD_KERNELS_H_

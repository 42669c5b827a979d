// Precision: the arithmetic a worker's compute runs in. kFp32, float32
// throughout (every model, CPU and CUDA); kBf16, mixed precision as PyTorch's
// bf16 autocast with float32 master weights runs it: the matrix products'
// operands rounded to bfloat16, their products accumulated and written in
// float32, the parameters, gradients, optimizer state and everything
// element-wise (bias, ReLU, the softmax cross-entropy) in float32. The
// gradients a strategy communicates are float32 either way (bf16 on the
// wire is ring_bf16's choice). Which models have bf16 arithmetic is
// MakeModel's to say (models/model_factory.h), which devices train in it
// the worker's (CheckPrecision, worker/device_selection.h).
//
// RoundToBf16 gives float32 arithmetic a product's bf16 operands: the CPU
// models in kBf16 multiply rounded copies with their float32 kernels (a
// product of two bfloat16 values is exact in float32), which is the CUDA
// path's arithmetic up to the order of the sums, at float32's speed: the
// numerics reference the GPU's bf16 is tested against. Pure; thread-safe.
#ifndef RINGSIDE_MODELS_PRECISION_H_
#define RINGSIDE_MODELS_PRECISION_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace ringside {

enum class Precision { kFp32, kBf16 };

// "fp32" or "bf16"; INVALID_ARGUMENT naming the value otherwise.
absl::StatusOr<Precision> ParsePrecision(absl::string_view text);
// "fp32", "bf16".
const char* PrecisionName(Precision precision);

// x rounded to bfloat16 and back to float32: to nearest, ties to even, NaN
// kept a NaN, infinities and signed zeros kept (Eigen::bfloat16's
// conversion: the rounding of CUDA's __float2bfloat16_rn and of PyTorch's
// cast).
float RoundToBf16(float x);
// out[i] = RoundToBf16(in[i]); `out` holds at least in.size() values (it
// may be `in` itself).
void RoundToBf16(absl::Span<const float> in, absl::Span<float> out);

}  // namespace ringside

#endif  // RINGSIDE_MODELS_PRECISION_H_

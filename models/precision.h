// Precision: the arithmetic a worker's compute runs in. kFp32, float32
// throughout (every model, CPU and CUDA); kBf16, mixed precision as PyTorch's
// bf16 autocast with float32 master weights runs it: the matrix products'
// operands rounded to bfloat16, their products accumulated and written in
// float32, the parameters, gradients, optimizer state and everything
// element-wise (bias, ReLU, the softmax cross-entropy) in float32. The
// gradients a strategy communicates are float32 either way (bf16 on the
// wire is ring_bf16's choice). Which models and devices compute in bf16 is
// the worker's to check (worker_main.cc). Pure; thread-safe.
#ifndef RINGSIDE_MODELS_PRECISION_H_
#define RINGSIDE_MODELS_PRECISION_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ringside {

enum class Precision { kFp32, kBf16 };

// "fp32" or "bf16"; INVALID_ARGUMENT naming the value otherwise.
absl::StatusOr<Precision> ParsePrecision(absl::string_view text);
// "fp32", "bf16".
const char* PrecisionName(Precision precision);

}  // namespace ringside

#endif  // RINGSIDE_MODELS_PRECISION_H_

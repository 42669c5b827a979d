// GlooHalfAllReduce: sum all-reduce of 16-bit float buffers over Gloo's TCP
// transport, for gradient compression: IEEE binary16 (fp16: Horovod's
// Compression.fp16, PyTorch DDP's fp16_compress_hook) or bfloat16 (bf16:
// PyTorch DDP's bf16_compress_hook; float32's exponent, 8 significant
// bits). The Collective contract (collective.h) is float32 only, so this
// is a separate, narrow group: Gloo's own ring (or halving-doubling)
// all-reduce on 2-byte elements whose reduction adds two elements in
// float32 and rounds the sum to the format (fp16: gloo::float16's
// operator+, F16C instructions where the CPU has them, the same bits
// either way). It moves 2 bytes per element on the wire and rounds after
// every addition, as a 16-bit NCCL ring does; every rank ends with the
// same bits.
//
// Creation is collective and blocking: every rank of the group calls
// Create with the same size, store prefix and algorithm (the prefix must
// differ from every other group's on the store). After an error the group
// is unusable and later calls fail with FAILED_PRECONDITION. Gloo's
// exceptions never escape (gloo_error.h). Not thread-safe: one thread
// issues a group's calls. A group of size 1 copies nothing.
#ifndef RINGSIDE_COLLECTIVES_GLOO_HALF_ALLREDUCE_H_
#define RINGSIDE_COLLECTIVES_GLOO_HALF_ALLREDUCE_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "collectives/gloo_collective.h"
#include "collectives/store.h"

namespace ringside {

// The 16-bit formats.
enum class HalfFormat { kFp16, kBf16 };
const char* HalfFormatName(HalfFormat format);  // "fp16" | "bf16"

// fp16 <-> float32 conversion, round to nearest even (bit-identical to
// Gloo's cpu_float2half_rn / cpu_half2float, with F16C when the CPU has
// it); overflow gives +-inf as on a GPU. `out` has the size of `in`.
// Thread-safe.
void FloatToHalf(absl::Span<const float> in, absl::Span<uint16_t> out);
void HalfToFloat(absl::Span<const uint16_t> in, absl::Span<float> out);

// bf16 <-> float32 conversion: the top 16 bits of the float, rounded to
// nearest even (as PyTorch's and the hardware's float -> bfloat16); a NaN
// stays a (quiet) NaN, values past bf16's largest finite round to +-inf.
// Widening is exact. `out` has the size of `in`. Thread-safe.
void FloatToBf16(absl::Span<const float> in, absl::Span<uint16_t> out);
void Bf16ToFloat(absl::Span<const uint16_t> in, absl::Span<float> out);

// The conversions of `format`.
void FloatToFormat(HalfFormat format, absl::Span<const float> in,
                   absl::Span<uint16_t> out);
void FormatToFloat(HalfFormat format, absl::Span<const uint16_t> in,
                   absl::Span<float> out);

class GlooHalfAllReduce {
 public:
  // Connects rank `rank` of a `size`-rank group through `store` (not owned;
  // used only during this call), with options.host/interface/algorithm/
  // connect_timeout/store_prefix as for CreateGlooCollective, summing
  // elements of `format`. Blocking, bounded by options.connect_timeout
  // (DEADLINE_EXCEEDED). INVALID_ARGUMENT on bad rank/size/options;
  // UNAVAILABLE if the transport cannot bind.
  static absl::StatusOr<std::unique_ptr<GlooHalfAllReduce>> Create(
      Store& store, int rank, int size, const GlooCollectiveOptions& options,
      HalfFormat format = HalfFormat::kFp16);
  ~GlooHalfAllReduce();

  int rank() const;
  int size() const;

  // In place: `data` (bit patterns of the group's format) becomes their
  // sum over ranks in that format. Blocking, collective, bounded by
  // `timeout`.
  absl::Status AllReduceSum(absl::Span<uint16_t> data, absl::Duration timeout);

 private:
  struct Impl;
  explicit GlooHalfAllReduce(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ringside

#endif  // RINGSIDE_COLLECTIVES_GLOO_HALF_ALLREDUCE_H_

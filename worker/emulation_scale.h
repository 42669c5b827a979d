// The worker's share of an emulated run at scale S (--emulation_scale,
// models/gradient_profiles.h's ScaledProfile): the strategies' byte
// thresholds shrink with the tensors, so that a bucket, a chunk, a zero3
// unit or a fusion buffer holds the same tensors as at full size.
//
// ScaleByteThresholdFlags divides the current value of every byte-valued
// strategy flag linked into this binary by S (kByteThresholdFlags: the
// ring buckets, the parameter servers' chunks, zero3's units, fusion's
// threshold), whether it was given or is its default, before the option
// structs read them (SyncOptionsFromFlags). 0 keeps its meaning (off, one
// per tensor, automatic); any other value becomes at least one unit (1 KiB;
// fusion's 4 bytes, a multiple of 4). Call once, after flag parsing, from
// the main thread.
#ifndef RINGSIDE_WORKER_EMULATION_SCALE_H_
#define RINGSIDE_WORKER_EMULATION_SCALE_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"

namespace ringside {

// A byte-valued flag: its name and its unit in bytes (1024 for *_kb).
struct ByteThresholdFlag {
  const char* name;
  int64_t unit_bytes;
};
inline constexpr ByteThresholdFlag kByteThresholdFlags[] = {
    {"ring_bucket_kb", 1024},       {"ring_first_bucket_kb", 1024},
    {"chunk_kb", 1024},             {"zero3_unit_kb", 1024},
    {"fusion_threshold_bytes", 1},
};

// One threshold at scale S >= 1: `value` (in bytes or in units of
// `unit_bytes`, a ByteThresholdFlag's) / S rounded to the nearest, at
// least one unit; 0 or less stays as it is. Byte counts (unit 1) are
// rounded down to a multiple of 4, at least 4 (fusion's threshold).
int64_t ScaledByteThreshold(int64_t value, double scale, int64_t unit_bytes);

// Scales the flags `reads` accepts (the chosen strategy's options; null:
// every one), so that a flag another strategy reads keeps its default (the
// worker refuses a changed flag its strategy does not read).
// INVALID_ARGUMENT unless `scale` is finite and >= 1, or when a flag's
// value is not an integer; scale 1 changes nothing.
absl::Status ScaleByteThresholdFlags(
    double scale, const std::function<bool(const std::string&)>& reads = {});

}  // namespace ringside

#endif  // RINGSIDE_WORKER_EMULATION_SCALE_H_

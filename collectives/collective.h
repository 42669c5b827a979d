// Collective: the all-reduce family over one group of ranks, on plain spans
// of one device. Backends (Gloo on CPU, NCCL on CUDA) implement it and say
// which devices they support (Horovod's Enabled() idea), so a CPU host skips
// NCCL cleanly.
//
// Every call is blocking, collective (all ranks call it in the same order
// with the same sizes) and bounded by `timeout`: DEADLINE_EXCEEDED names the
// operation. After an error the group is unusable. Not thread-safe: one
// thread issues a group's calls.
#ifndef RINGSIDE_COLLECTIVES_COLLECTIVE_H_
#define RINGSIDE_COLLECTIVES_COLLECTIVE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "core/device.h"

namespace ringside {

enum class ReduceOp { kSum, kAverage };

class Collective {
 public:
  virtual ~Collective() = default;

  virtual std::string backend() const = 0;  // "gloo", "nccl"
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual bool Supports(Device device) const = 0;

  // In place: data becomes the sum (or average) over ranks.
  virtual absl::Status AllReduce(absl::Span<float> data, ReduceOp op,
                                 absl::Duration timeout) = 0;
  // In place: every rank ends with root's data.
  virtual absl::Status Broadcast(absl::Span<float> data, int root,
                                 absl::Duration timeout) = 0;
  // out = concatenation of every rank's `in` in rank order;
  // out.size() == size() * in.size().
  virtual absl::Status AllGather(absl::Span<const float> in,
                                 absl::Span<float> out,
                                 absl::Duration timeout) = 0;
  virtual absl::Status Barrier(absl::Duration timeout) = 0;
};

}  // namespace ringside

#endif  // RINGSIDE_COLLECTIVES_COLLECTIVE_H_

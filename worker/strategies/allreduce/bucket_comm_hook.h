// BucketCommHook: how ring's communication thread averages one bucket of
// float32 gradients across the ranks, in place (PyTorch DDP's comm hook:
// the bucketing, overlap, optimizer and checkpoints stay ring's; the hook
// decides what goes on the wire). Ring calls Connect once in Init, after
// its own collective is connected and has broadcast rank 0's parameters,
// then Reduce from its communication thread only, one bucket at a time.
//
// MakeAllReduceHook: ring's own, an average all-reduce through ring's
// collective (Gloo on CPU, NCCL on CUDA). Compression hooks live in their
// own file pairs (half_compression_hook.h).
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_BUCKET_COMM_HOOK_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_BUCKET_COMM_HOOK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "collectives/collective.h"
#include "collectives/store.h"
#include "core/tensor_layout.h"
#include "worker/sync_strategy.h"

namespace ringside {

// One timed phase of a Reduce (timeline only), e.g. COMPRESS.
struct HookPhase {
  const char* name;
  double start_s;
  double end_s;
};

// A bucket of the flat buffer: `size` elements from element `offset`.
struct BucketSpan {
  int64_t offset = 0;
  int64_t size = 0;
};

class BucketCommHook {
 public:
  virtual ~BucketCommHook() = default;
  // Connects what the hook needs beyond ring's `collective` (kept by
  // reference: it outlives the hook), through `store` under keys starting
  // with `store_prefix`. Blocking, bounded by connect_timeout.
  virtual absl::Status Connect(const SyncContext& context, Store& store,
                               const std::string& store_prefix,
                               Collective& collective) = 0;
  // Replaces `grads` (the bucket at element `offset` of the flat buffer)
  // by its average over the ranks, bounded by rpc_timeout. With `phases`
  // non-null, appends its phases' times (NowSeconds()) in order.
  virtual absl::Status Reduce(absl::Span<float> grads, int64_t offset,
                              std::vector<HookPhase>* phases) = 0;
  // Bytes of one gradient element on the wire (float32: 4, fp16: 2).
  virtual int wire_bytes_per_element() const = 0;
  // The bytes the Reduce calls since the last call put on the wire per
  // float32 byte of the gradients they were given (a ring all-reduce's
  // 2(N−1)/N scaled by this); ring reads it once a step, after the step's
  // buckets are done. Default: wire_bytes_per_element() / 4.
  virtual double TakeWireShare() { return wire_bytes_per_element() / 4.0; }
  // Whether Reduce takes buffers on `device` (CUDA device memory).
  virtual bool SupportsDevice(Device device) const = 0;
  // The setting its row names (ring's SyncStrategy::Variant), after
  // Connect: "r=4, 8 exact first"; "" (the default): none.
  virtual std::string Variant() const { return ""; }
  // The state this rank's hook carries from one step to the next (error
  // feedback, warm-start factors), for checkpoints: every bucket's of
  // `buckets` (ring's, in its order) as floats, a bucket not reduced yet
  // as it would start; empty (the default): a hook without state.
  virtual std::vector<float> ExportState(absl::Span<const BucketSpan> buckets) {
    return {};
  }
  // Restores what ExportState returned for the same `buckets` (before the
  // first Reduce). INVALID_ARGUMENT when `state` does not fit them.
  virtual absl::Status ImportState(absl::Span<const BucketSpan> buckets,
                                   absl::Span<const float> state);
};

std::unique_ptr<BucketCommHook> MakeAllReduceHook();

// What the compression hooks share.
//
// One tensor's part of the bucket at `offset` of `size` elements: the
// tensor's index, where its part starts within the bucket, how many
// elements it has there, and whether the whole tensor lies inside.
struct BucketPart {
  int tensor = 0;
  int64_t begin = 0;
  int64_t size = 0;
  bool whole = false;
};
// `grads` averaged over the ranks with one plain float32 all-reduce
// (ring's own hook; a compression hook before its compression starts),
// bounded by `timeout`, its "ALLREDUCE" phase appended when `phases` is
// non-null; an error names `what`.
absl::Status AverageBucket(Collective& collective, absl::Span<float> grads,
                           absl::Duration timeout, absl::string_view what,
                           std::vector<HookPhase>* phases);

// The parts of every tensor the bucket overlaps, in layout order.
std::vector<BucketPart> BucketParts(const TensorLayout& layout,
                                    int64_t offset, int64_t size);

// Reads a hook's state (ImportState) piece by piece, in ExportState's
// order: Take(n) returns the next n floats, Done checks that none is left;
// both INVALID_ARGUMENT naming the hook when the state does not fit.
class HookStateReader {
 public:
  HookStateReader(std::string hook, absl::Span<const float> state)
      : hook_(std::move(hook)), state_(state) {}
  absl::StatusOr<absl::Span<const float>> Take(int64_t n);
  absl::Status Done() const;

 private:
  const std::string hook_;
  absl::Span<const float> state_;
  size_t at_ = 0;
};

// A hook's wire share between TakeWireShare calls: the elements a ring
// all-reduce would have to move for the same bytes on the wire, per
// element reduced (an all-gather of g floats a rank moves what a ring
// all-reduce of n·g/2 does).
class WireShare {
 public:
  void Add(int64_t reduced, double ring_equivalent) {
    reduced_ += reduced;
    ring_equivalent_ += ring_equivalent;
  }
  // The share since the last Take (1 when nothing was reduced); resets.
  double Take() {
    const double share =
        reduced_ > 0 ? ring_equivalent_ / static_cast<double>(reduced_) : 1.0;
    reduced_ = 0;
    ring_equivalent_ = 0;
    return share;
  }

 private:
  int64_t reduced_ = 0;
  double ring_equivalent_ = 0;
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_BUCKET_COMM_HOOK_H_

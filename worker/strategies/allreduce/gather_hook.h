// GatherHook: the frame of ring's compression hooks that all-gather what every
// rank sends (topk_hook.h, sign_hook.h). For each bucket's first
// --compression_start_step steps (compression_start_options.h) Reduce averages
// it with a plain float32 all-reduce; after that, per bucket, Reduce has the
// hook Compress the bucket's gradients into this rank's message, runs one
// all-gather of every rank's message (the same length on every rank: the layout
// decides it), zeroes the bucket, has the hook Decompress each rank's message
// into it in rank order (so every rank holds the same bits) and divides by N.
// It times the three phases for the timeline (COMPRESS, ALLGATHER, DECOMPRESS)
// and counts the wire share: an all-gather of g floats a rank moves what a ring
// all-reduce of n·g/2 does. CPU buffers only; 4-byte words on the wire (an
// index or bits travel in a float's slot).
#ifndef RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_GATHER_HOOK_H_
#define RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_GATHER_HOOK_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "worker/strategies/allreduce/bucket_comm_hook.h"

namespace ringside {

class GatherHook : public BucketCommHook {
 public:
  absl::Status Connect(const SyncContext& context, Store& store,
                       const std::string& store_prefix,
                       Collective& collective) final;
  absl::Status Reduce(absl::Span<float> grads, int64_t offset,
                      std::vector<HookPhase>* phases) final;
  int wire_bytes_per_element() const final { return 4; }
  double TakeWireShare() final { return wire_.Take(); }
  bool SupportsDevice(Device device) const final {
    return device == Device::kCpu;
  }
  // "8 exact first" with --compression_start_step=8; "" without.
  std::string Variant() const final;
  // Per bucket, in `buckets`' order: its step count (StepAsFloats), then
  // its error memory.
  std::vector<float> ExportState(absl::Span<const BucketSpan> buckets) final;
  absl::Status ImportState(absl::Span<const BucketSpan> buckets,
                           absl::Span<const float> state) final;

 protected:
  // `what` names the compression in errors ("top-k").
  explicit GatherHook(std::string what) : what_(std::move(what)) {}
  // The hook's own set-up, after the job's facts are kept (layout(),
  // world_size()). Default: none.
  virtual absl::Status Configure(const SyncContext& context) {
    return absl::OkStatus();
  }
  // This rank's message for the bucket at `offset` of the flat buffer,
  // made from `grads` (the hook keeps its error feedback); it stays valid
  // until the Decompress calls of this Reduce are done.
  virtual absl::Span<const float> Compress(absl::Span<const float> grads,
                                           int64_t offset) = 0;
  // Adds one rank's `message` into `bucket` (the ranks in order, the
  // bucket zeroed before the first).
  virtual void Decompress(absl::Span<const float> message,
                          absl::Span<float> bucket) = 0;
  // The error memory of the bucket at `offset` of `size` elements (made
  // as Compress would make it on the bucket's first Reduce), `size` floats.
  virtual std::vector<float>& ErrorMemory(int64_t offset, int64_t size) = 0;

  const TensorLayout& layout() const { return layout_; }
  int world_size() const { return world_size_; }

 private:
  const std::string what_;
  int64_t start_step_ = 0;  // --compression_start_step
  // Each bucket's Reduce calls so far, keyed by its offset.
  std::unordered_map<int64_t, int64_t> steps_;
  int world_size_ = 1;
  absl::Duration timeout_;
  Collective* collective_ = nullptr;
  TensorLayout layout_;
  std::vector<float> received_;  // every rank's message, in rank order
  WireShare wire_;
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_ALLREDUCE_GATHER_HOOK_H_

// BucketCommThread: gradient buckets (gradient_buckets.h) reduced by one
// communication thread as backward fills them, for the all-reduce
// strategies that overlap with backward (ring, ring_fp16, hierarchical).
// The training thread calls OnGradientReady(t) as backward makes tensor t
// final; once every tensor of a bucket is, the bucket is queued and
// `reduce(bucket, step)` runs on the communication thread (a
// CommQueueThread: in queue order; after the first error, later buckets
// are counted, not run; an error names the bucket's tensors, "tensors
// fc1.weight .. fc2.bias: ..."). WaitForStep waits, bounded, for every bucket of
// the step and arms the counts for the next one.
//
// Timeline: with `timeline` set, OnGradientReady(t) notes NowSeconds()
// (written before the bucket is queued, read by the communication thread
// after); QueueSpans and SpanEachTensor draw one span
// per tensor of a bucket on the tensor's lane (args: step, the tensor's
// bytes at `bytes_per_element`, the bucket's). Without one the clock is
// not read and they draw nothing.
//
// Thread-safety: OnGradientReady and WaitForStep from the training thread
// only; `reduce` runs on the communication thread only. Stop joins it;
// the destructor stops.
#ifndef RINGSIDE_WORKER_STRATEGIES_COMM_BUCKET_COMM_THREAD_H_
#define RINGSIDE_WORKER_STRATEGIES_COMM_BUCKET_COMM_THREAD_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/timeline.h"
#include "core/tensor_layout.h"
#include "worker/strategies/comm/comm_queue_thread.h"
#include "worker/strategies/allreduce/gradient_buckets.h"
#include "worker/sync_strategy.h"

namespace ringside {

class BucketCommThread {
 public:
  using ReduceFn =
      std::function<absl::Status(const GradientBucket& bucket, int64_t step)>;

  // Buckets `layout` (AssignBuckets with the two caps, bytes of float32
  // gradients; cap_bytes 0: one per tensor) and starts the thread.
  // `items_done` names the buckets' work in the deadline error, e.g.
  // "gradient buckets all-reduced". `layout` and `timeline` (may be null)
  // must outlive this.
  BucketCommThread(const TensorLayout* layout, int64_t first_cap_bytes,
                   int64_t cap_bytes, Timeline* timeline,
                   std::string items_done, ReduceFn reduce);

  // The job's buckets: the caps and timeline of `options`
  // (--ring_first_bucket_kb, --ring_bucket_kb, --timeline).
  static std::unique_ptr<BucketCommThread> ForJob(const TensorLayout* layout,
                                                  const SyncOptions& options,
                                                  std::string items_done,
                                                  ReduceFn reduce);

  const std::vector<GradientBucket>& buckets() const { return buckets_; }

  // Tensor `tensor` of the current step is final; queues its bucket when
  // it was the bucket's last. Non-blocking.
  void OnGradientReady(int tensor);
  // Blocks until every bucket of `step` is reduced (DEADLINE_EXCEEDED after
  // `timeout`), then arms the next step. Returns the first error.
  absl::Status WaitForStep(int64_t step, absl::Duration timeout);
  // Stops and joins the thread. Idempotent.
  void Stop();

  // QUEUE on the lane of every tensor of `bucket`, from its
  // OnGradientReady to `start` (its bucket's reduction began).
  void QueueSpans(const GradientBucket& bucket, double start, int64_t step,
                  int bytes_per_element) const;
  // One span `name` from `start` to `end` on the lane of every tensor of
  // `bucket`.
  void SpanEachTensor(const GradientBucket& bucket, const char* name,
                      double start, double end, int64_t step,
                      int bytes_per_element) const;

 private:
  void ArmStep();
  // Span `name` from `start` (ready_s_ per tensor when null) to `end`.
  void Spans(const GradientBucket& bucket, const char* name,
             const double* start, double end, int64_t step,
             int bytes_per_element) const;

  const TensorLayout* const layout_;
  Timeline* const timeline_;
  const std::vector<GradientBucket> buckets_;
  std::vector<int> bucket_of_;  // by tensor
  // Training thread only: tensors of each bucket not yet ready this step.
  std::vector<int> pending_;
  std::vector<double> ready_s_;            // by tensor, timeline only
  std::unique_ptr<CommQueueThread> comm_;  // last: stops first
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_COMM_BUCKET_COMM_THREAD_H_

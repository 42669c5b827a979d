#include "worker/strategies/comm/bucket_comm_thread.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"

namespace ringside {

BucketCommThread::BucketCommThread(const TensorLayout* layout,
                                   int64_t first_cap_bytes, int64_t cap_bytes,
                                   Timeline* timeline, std::string items_done,
                                   ReduceFn reduce)
    : layout_(layout),
      timeline_(timeline),
      buckets_(AssignBuckets(*layout, first_cap_bytes, cap_bytes)) {
  bucket_of_.assign(layout->num_tensors(), 0);
  for (size_t b = 0; b < buckets_.size(); ++b) {
    for (int t = buckets_[b].first_tensor; t <= buckets_[b].last_tensor; ++t) {
      bucket_of_[t] = static_cast<int>(b);
    }
  }
  ready_s_.assign(layout->num_tensors(), 0.0);
  ArmStep();
  comm_ = std::make_unique<CommQueueThread>(
      static_cast<int>(buckets_.size()), std::move(items_done),
      /*read_clock=*/false,
      [this, reduce = std::move(reduce)](int b, int64_t step, double) {
        const GradientBucket& bucket = buckets_[b];
        return Annotate(
            reduce(bucket, step),
            absl::StrCat("tensors ", layout_->tensor(bucket.first_tensor).name,
                         " .. ", layout_->tensor(bucket.last_tensor).name));
      });
}

std::unique_ptr<BucketCommThread> BucketCommThread::ForJob(
    const TensorLayout* layout, const SyncOptions& options,
    std::string items_done, ReduceFn reduce) {
  const auto& caps = options.strategy.Get<GradientBucketOptions>();
  return std::make_unique<BucketCommThread>(
      layout, caps.first_bucket_bytes, caps.bucket_bytes, options.timeline,
      std::move(items_done), std::move(reduce));
}

void BucketCommThread::OnGradientReady(int tensor) {
  if (timeline_ != nullptr) ready_s_[tensor] = NowSeconds();
  const int bucket = bucket_of_[tensor];
  if (--pending_[bucket] == 0) comm_->Enqueue(bucket);
}

absl::Status BucketCommThread::WaitForStep(int64_t step,
                                           absl::Duration timeout) {
  absl::Status s = comm_->WaitForStep(step, timeout);
  ArmStep();
  return s;
}

void BucketCommThread::Stop() { comm_->Stop(); }

void BucketCommThread::QueueSpans(const GradientBucket& bucket, double start,
                                  int64_t step, int bytes_per_element) const {
  Spans(bucket, "QUEUE", nullptr, start, step, bytes_per_element);
}

void BucketCommThread::SpanEachTensor(const GradientBucket& bucket,
                                      const char* name, double start,
                                      double end, int64_t step,
                                      int bytes_per_element) const {
  Spans(bucket, name, &start, end, step, bytes_per_element);
}

void BucketCommThread::Spans(const GradientBucket& bucket, const char* name,
                             const double* start, double end, int64_t step,
                             int bytes_per_element) const {
  if (timeline_ == nullptr) return;
  for (int t = bucket.first_tensor; t <= bucket.last_tensor; ++t) {
    const TensorSpec& spec = layout_->tensor(t);
    timeline_->Span(spec.name, name, start ? *start : ready_s_[t], end,
                    {{"step", step},
                     {"bytes", spec.size * bytes_per_element},
                     {"bucket_bytes", bucket.size * bytes_per_element}});
  }
}

void BucketCommThread::ArmStep() {
  pending_.resize(buckets_.size());
  for (size_t b = 0; b < buckets_.size(); ++b) {
    pending_[b] = buckets_[b].num_tensors();
  }
}

}  // namespace ringside

#include "worker/batch_prefetcher.h"

#include <utility>

#include "common/stopwatch.h"

namespace ringside {

BatchPrefetcher::BatchPrefetcher(Dataset& dataset, PrepareFn prepare)
    : dataset_(dataset),
      prepare_(std::move(prepare)),
      thread_([this] { Loop(); }) {}

BatchPrefetcher::~BatchPrefetcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

absl::Status BatchPrefetcher::Read(int slot, Range range) {
  const double start = NowSeconds();
  absl::Status read =
      dataset_.TrainBatch(range.begin, range.count, &slots_[slot]);
  if (read.ok() && prepare_) read = prepare_(slots_[slot]);
  const double took = NowSeconds() - start;
  std::lock_guard<std::mutex> lock(mu_);
  ++reads_;
  read_s_ += took;
  return read;
}

int64_t BatchPrefetcher::reads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reads_;
}

double BatchPrefetcher::read_seconds() const {
  std::lock_guard<std::mutex> lock(mu_);
  return read_s_;
}

void BatchPrefetcher::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || requested_; });
    if (stop_) return;
    requested_ = false;
    const int slot = pending_slot_;
    const Range range = *pending_;
    lock.unlock();
    absl::Status status = Read(slot, range);  // takes mu_ to count
    lock.lock();
    pending_status_ = std::move(status);
    in_flight_ = false;
    cv_.notify_all();
  }
}

absl::StatusOr<const Batch*> BatchPrefetcher::Get(Range want,
                                                  std::optional<Range> next) {
  const double start = NowSeconds();
  ++gets_;
  // Wait for the read in flight: it holds the other slot and the data set.
  std::optional<Range> ahead;
  absl::Status ahead_status;
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !in_flight_; });
    ahead = std::exchange(pending_, std::nullopt);
    ahead_status = std::exchange(pending_status_, absl::OkStatus());
  }
  const int other = 1 - current_;
  if (ahead.has_value() && *ahead == want) {
    if (!ahead_status.ok()) return ahead_status;
    ++hits_;
  } else {
    // Not read ahead (the first pass, or a range nobody announced): read
    // it now, into the free slot.
    if (absl::Status read = Read(other, want); !read.ok()) return read;
  }
  wait_s_ += NowSeconds() - start;
  current_ = other;
  if (next.has_value()) {
    std::lock_guard<std::mutex> lock(mu_);
    pending_ = *next;
    pending_slot_ = 1 - current_;
    in_flight_ = true;
    requested_ = true;
  }
  cv_.notify_all();
  return &slots_[current_];
}

}  // namespace ringside

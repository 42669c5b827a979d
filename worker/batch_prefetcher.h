// BatchPrefetcher: reads a worker's training batches one pass ahead, on a
// thread of its own, so a device computes on batch i while the host
// assembles (and may stage) batch i + 1, as a data loader with workers and
// pinned memory does for PyTorch.
//
// Get(begin, count, next) returns the batch of examples [begin, begin +
// count) of the data set's training order: the one read ahead when the
// previous Get named it as `next`, else read now on the calling thread.
// It then starts reading `next` (when given) in the background, into the
// other of two Batch objects, and calls `prepare` on that thread with the
// batch just read (a backend's staging: ComputeBackend::PrepareBatch).
// Batches are exactly Dataset::TrainBatch's: the data set is read from one
// thread at a time, in the order the loop asks, so every rank sees the
// same examples with or without the prefetcher.
//
// It times the input: how long Get kept its caller waiting (for a read in
// flight, or reading in line), and how long each read took wherever it ran
// (TrainBatch plus `prepare`) -- whether the input keeps up with the steps.
//
// The returned batch stays valid and unchanged until the next Get. Errors
// of the background read or of `prepare` come back from the Get that wants
// that batch. The destructor waits for a read in flight. Not thread-safe:
// one caller (the training loop).
#ifndef RINGSIDE_WORKER_BATCH_PREFETCHER_H_
#define RINGSIDE_WORKER_BATCH_PREFETCHER_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/dataset.h"

namespace ringside {

class BatchPrefetcher {
 public:
  // Examples [begin, begin + count) of the training order.
  struct Range {
    int64_t begin = 0;
    int64_t count = 0;
    bool operator==(const Range& o) const {
      return begin == o.begin && count == o.count;
    }
  };
  using PrepareFn = std::function<absl::Status(const Batch&)>;

  // `dataset` must outlive the prefetcher and be read by nothing else
  // while it runs. `prepare` may be empty.
  BatchPrefetcher(Dataset& dataset, PrepareFn prepare);
  ~BatchPrefetcher();
  BatchPrefetcher(const BatchPrefetcher&) = delete;
  BatchPrefetcher& operator=(const BatchPrefetcher&) = delete;

  absl::StatusOr<const Batch*> Get(Range want, std::optional<Range> next);

  // Gets so far whose batch had been read ahead (for tests and records).
  int64_t hits() const { return hits_; }
  // Gets and reads so far, and their seconds in all: the caller's wait in
  // Get, and the reads' own time (background and in line).
  int64_t gets() const { return gets_; }
  double wait_seconds() const { return wait_s_; }
  int64_t reads() const;
  double read_seconds() const;

 private:
  // Reads `range` into slots_[slot] and prepares it.
  absl::Status Read(int slot, Range range);
  void Loop();

  Dataset& dataset_;
  const PrepareFn prepare_;
  Batch slots_[2];
  int current_ = 0;  // the slot Get returned last
  int64_t hits_ = 0;
  int64_t gets_ = 0;
  double wait_s_ = 0;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  // The background read: requested (slot, range), then done with status.
  std::optional<Range> pending_;  // guarded by mu_
  bool requested_ = false;        // guarded by mu_; not yet started
  bool in_flight_ = false;        // guarded by mu_; requested or running
  absl::Status pending_status_;   // guarded by mu_
  int pending_slot_ = 1;          // guarded by mu_
  bool stop_ = false;             // guarded by mu_
  int64_t reads_ = 0;             // guarded by mu_
  double read_s_ = 0;             // guarded by mu_
  std::thread thread_;
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_BATCH_PREFETCHER_H_

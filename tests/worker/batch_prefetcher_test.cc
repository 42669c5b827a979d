// BatchPrefetcher: the batches it returns are exactly the data set's, read
// ahead when announced and in line otherwise; the batch handed out is
// never the one being read; errors of the background read or of the
// prepare step come back from the Get that wants that batch; destruction
// with a read in flight returns; reads and waits are timed.
#include "worker/batch_prefetcher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "models/synthetic_classification.h"

namespace ringside {
namespace {

using Range = BatchPrefetcher::Range;

std::unique_ptr<SyntheticClassification> Data() {
  SyntheticClassificationOptions options;
  options.feature_dim = 5;
  options.num_classes = 3;
  options.train_examples = 40;
  options.eval_examples = 4;
  absl::StatusOr<std::unique_ptr<SyntheticClassification>> data =
      SyntheticClassification::Create(options);
  EXPECT_TRUE(data.ok()) << data.status();
  return *std::move(data);
}

void ExpectSameBatch(const Batch& got, const Batch& want) {
  EXPECT_EQ(got.size, want.size);
  EXPECT_EQ(got.features, want.features);
  EXPECT_EQ(got.labels, want.labels);
}

// Ranges crossing epochs (40 examples), read ahead in order.
TEST(BatchPrefetcherTest, ReturnsTheDataSetsBatchesReadAhead) {
  std::unique_ptr<SyntheticClassification> reference = Data();
  std::unique_ptr<SyntheticClassification> data = Data();
  std::atomic<int> prepared{0};
  BatchPrefetcher prefetcher(*data, [&](const Batch&) {
    ++prepared;
    return absl::OkStatus();
  });
  const int kGets = 12;
  for (int i = 0; i < kGets; ++i) {
    std::optional<Range> next;
    if (i + 1 < kGets) next = Range{(i + 1) * 7, 7};
    absl::StatusOr<const Batch*> got = prefetcher.Get(Range{i * 7, 7}, next);
    ASSERT_TRUE(got.ok()) << got.status();
    Batch want;
    ASSERT_TRUE(reference->TrainBatch(i * 7, 7, &want).ok());
    ExpectSameBatch(**got, want);
  }
  EXPECT_EQ(prefetcher.hits(), kGets - 1);  // all but the first
  EXPECT_EQ(prepared.load(), kGets);        // each batch once
}

// The input's timing: every read (in line or ahead) counts its prepare's
// time, and the caller's wait includes the first batch, read in line.
TEST(BatchPrefetcherTest, TimesTheReadsAndTheCallersWait) {
  std::unique_ptr<SyntheticClassification> data = Data();
  const double kPrepareS = 0.03;
  BatchPrefetcher prefetcher(*data, [&](const Batch&) {
    std::this_thread::sleep_for(std::chrono::duration<double>(kPrepareS));
    return absl::OkStatus();
  });
  const int kGets = 4;
  for (int i = 0; i < kGets; ++i) {
    std::optional<Range> next;
    if (i + 1 < kGets) next = Range{(i + 1) * 7, 7};
    ASSERT_TRUE(prefetcher.Get(Range{i * 7, 7}, next).ok());
  }
  EXPECT_EQ(prefetcher.gets(), kGets);
  EXPECT_EQ(prefetcher.reads(), kGets);
  EXPECT_GE(prefetcher.read_seconds(), kGets * kPrepareS);
  EXPECT_GE(prefetcher.wait_seconds(), kPrepareS);  // the first, in line
  EXPECT_LE(prefetcher.wait_seconds(), prefetcher.read_seconds() + 1.0);
}

// A Get of a range other than the one announced reads it in line; the
// read-ahead batch is dropped, not returned.
TEST(BatchPrefetcherTest, UnannouncedRangeIsReadInLine) {
  std::unique_ptr<SyntheticClassification> reference = Data();
  std::unique_ptr<SyntheticClassification> data = Data();
  BatchPrefetcher prefetcher(*data, nullptr);
  ASSERT_TRUE(prefetcher.Get(Range{0, 4}, Range{4, 4}).ok());
  absl::StatusOr<const Batch*> got = prefetcher.Get(Range{20, 3}, std::nullopt);
  ASSERT_TRUE(got.ok()) << got.status();
  Batch want;
  ASSERT_TRUE(reference->TrainBatch(20, 3, &want).ok());
  ExpectSameBatch(**got, want);
  EXPECT_EQ(prefetcher.hits(), 0);
}

// While the caller holds batch i, the prefetcher prepares batch i + 1 in
// the other Batch object: never the one handed out.
TEST(BatchPrefetcherTest, NeverWritesTheBatchHandedOut) {
  std::unique_ptr<SyntheticClassification> data = Data();
  std::mutex mu;
  std::vector<const Batch*> prepared;
  BatchPrefetcher prefetcher(*data, [&](const Batch& batch) {
    std::lock_guard<std::mutex> lock(mu);
    prepared.push_back(&batch);
    return absl::OkStatus();
  });
  for (int i = 0; i < 6; ++i) {
    absl::StatusOr<const Batch*> got =
        prefetcher.Get(Range{i * 2, 2}, Range{(i + 1) * 2, 2});
    ASSERT_TRUE(got.ok());
    // Let the read of batch i + 1 finish, then look at what it wrote.
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const Batch copy = **got;
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_FALSE(prepared.empty());
    EXPECT_EQ(prepared[static_cast<size_t>(i)], *got);
    if (prepared.size() > static_cast<size_t>(i) + 1) {
      EXPECT_NE(prepared[static_cast<size_t>(i) + 1], *got);
    }
    EXPECT_EQ((*got)->features, copy.features);
  }
}

// The prepare step fails for the third batch: the Get that wants it says
// so; the earlier ones succeed.
TEST(BatchPrefetcherTest, BackgroundErrorComesBackFromItsGet) {
  std::unique_ptr<SyntheticClassification> data = Data();
  int calls = 0;  // on the prefetcher's thread, or in line for the first
  BatchPrefetcher prefetcher(*data, [&](const Batch&) {
    return ++calls == 3 ? absl::UnavailableError("copy stream broke")
                        : absl::OkStatus();
  });
  EXPECT_TRUE(prefetcher.Get(Range{0, 2}, Range{2, 2}).ok());
  EXPECT_TRUE(prefetcher.Get(Range{2, 2}, Range{4, 2}).ok());
  absl::StatusOr<const Batch*> third = prefetcher.Get(Range{4, 2}, Range{6, 2});
  EXPECT_EQ(third.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(third.status().message().find("copy stream broke"),
            std::string::npos);
  // A bad range read ahead fails at its Get, with the data set's error.
  absl::StatusOr<const Batch*> ok = prefetcher.Get(Range{8, 2}, Range{-1, 2});
  ASSERT_TRUE(ok.ok()) << ok.status();
  absl::StatusOr<const Batch*> bad = prefetcher.Get(Range{-1, 2}, std::nullopt);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
}

// Destroyed while a slow read is in flight: waits for it and returns (a
// read requested but not yet started is dropped).
TEST(BatchPrefetcherTest, DestructionWaitsForTheReadInFlight) {
  std::unique_ptr<SyntheticClassification> data = Data();
  std::atomic<int> started{0};
  std::atomic<int> finished{0};
  {
    BatchPrefetcher prefetcher(*data, [&](const Batch&) {
      ++started;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      ++finished;
      return absl::OkStatus();
    });
    ASSERT_TRUE(prefetcher.Get(Range{0, 2}, Range{2, 2}).ok());
    // Bounded: the background read starts within a second.
    for (int i = 0; i < 1000 && started.load() < 2; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_EQ(started.load(), 2);
  }
  EXPECT_EQ(finished.load(), 2);
}

}  // namespace
}  // namespace ringside

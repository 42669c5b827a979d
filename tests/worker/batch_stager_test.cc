// BatchStager on a GPU: a staged batch's device arrays hold the batch's
// data once the reader's stream has waited; a batch never staged, or
// changed in size since, is not served; a third Batch object is refused;
// restaging a slot after its release serves the new data. Skips (visibly)
// without a GPU or a CUDA build.
#include "worker/batch_stager.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "device/cuda_stream.h"
#include "tests/testing/gpu_skip.h"

namespace ringside {
namespace {

Batch MakeBatch(int64_t size, float base) {
  Batch batch;
  batch.size = size;
  for (int64_t i = 0; i < size * 3; ++i) batch.features.push_back(base + i);
  for (int64_t i = 0; i < size; ++i) {
    batch.labels.push_back(static_cast<int32_t>(i % 7));
  }
  return batch;
}

// The `count` floats at device address `d` (labels: their bits).
std::vector<float> Read(const void* d, int64_t count, CudaStream stream) {
  std::vector<float> host(count);
  EXPECT_TRUE(SynchronizeStream(stream).ok());
  EXPECT_TRUE(
      CopyAsync(host.data(), static_cast<const float*>(d), count, stream).ok());
  EXPECT_TRUE(SynchronizeStream(stream).ok());
  return host;
}

TEST(BatchStagerTest, ServesWhatWasStaged) {
  SKIP_WITHOUT_GPU();
  absl::StatusOr<std::unique_ptr<BatchStager>> stager = BatchStager::Create(0);
  ASSERT_TRUE(stager.ok()) << stager.status();
  absl::StatusOr<OwnedCudaStream> stream = OwnedCudaStream::Create(0);
  ASSERT_TRUE(stream.ok()) << stream.status();

  Batch a = MakeBatch(5, 1.0f);
  Batch b = MakeBatch(4, 100.0f);
  Batch c = MakeBatch(2, 7.0f);
  ASSERT_TRUE((*stager)->Stage(a).ok());
  ASSERT_TRUE((*stager)->Stage(b).ok());
  EXPECT_EQ((*stager)->Stage(c).code(), absl::StatusCode::kFailedPrecondition);

  absl::StatusOr<std::optional<DeviceBatch>> got =
      (*stager)->Acquire(a, stream->get());
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->size, 5);
  EXPECT_EQ((*got)->tokens, nullptr);
  EXPECT_EQ(Read((*got)->features, 15, stream->get()), a.features);
  std::vector<float> label_bits = Read((*got)->labels, 5, stream->get());
  std::vector<int32_t> labels(5);
  std::memcpy(labels.data(), label_bits.data(), 5 * sizeof(int32_t));
  EXPECT_EQ(labels, a.labels);
  ASSERT_TRUE((*stager)->Release(a, stream->get()).ok());
  // Released: not served again until staged again.
  got = (*stager)->Acquire(a, stream->get());
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->has_value());

  // Restaged with new data (the prefetcher reusing its Batch object).
  a = MakeBatch(5, -50.0f);
  ASSERT_TRUE((*stager)->Stage(a).ok());
  got = (*stager)->Acquire(a, stream->get());
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ(Read((*got)->features, 15, stream->get()), a.features);

  // A batch whose size changed since it was staged, and one never staged.
  b.size = 3;
  got = (*stager)->Acquire(b, stream->get());
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->has_value());
  got = (*stager)->Acquire(c, stream->get());
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->has_value());
  EXPECT_EQ((*stager)->staged(), 3);
}

}  // namespace
}  // namespace ringside

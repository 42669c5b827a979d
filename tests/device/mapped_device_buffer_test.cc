// MappedDeviceBuffer on a GPU: pages dropped go back to the device (its
// memory in use, cudaMemGetInfo, falls by them) only once the work queued
// before the drop has finished, pages held again come back with the same
// addresses and keep what is written into them, and a drop without its hold
// is refused. Skips, saying why, without a GPU.
#include "device/mapped_device_buffer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "device/cuda_device.h"
#include "device/cuda_stream.h"
#include "device/device_buffer.h"
#include "tests/testing/gpu_skip.h"

namespace ringside {
namespace {

TEST(MappedDeviceBufferTest, DroppedPagesLeaveTheDeviceAndComeBack) {
  SKIP_WITHOUT_GPU();
  absl::StatusOr<int64_t> before = CudaMemoryInUse(0);
  ASSERT_TRUE(before.ok()) << before.status();
  const size_t floats = 64u << 20;  // 256 MiB
  absl::StatusOr<std::unique_ptr<MappedDeviceBuffer>> made =
      MappedDeviceBuffer::Create(0, floats);
  ASSERT_TRUE(made.ok()) << made.status();
  MappedDeviceBuffer& buffer = **made;
  const size_t page_floats = buffer.page_bytes() / sizeof(float);
  ASSERT_GT(page_floats, 0u);
  const int64_t whole = buffer.mapped_bytes();
  EXPECT_GE(whole, static_cast<int64_t>(floats * sizeof(float)));
  absl::StatusOr<int64_t> mapped = CudaMemoryInUse(0);
  ASSERT_TRUE(mapped.ok());
  // The device agrees within a page per 64 (its own bookkeeping).
  EXPECT_NEAR(static_cast<double>(*mapped - *before),
              static_cast<double>(whole), whole / 64.0);

  // Keep the first quarter, give back the rest.
  const size_t keep = floats / 4;
  const std::vector<float> values(keep, 1.5f);
  ASSERT_TRUE(CopyToDevice(values, buffer.data()).ok());
  ASSERT_TRUE(buffer.Hold(0, keep).ok());
  ASSERT_TRUE(buffer.Drop(0, floats, /*after=*/nullptr).ok());
  EXPECT_EQ(buffer.mapped_bytes(),
            static_cast<int64_t>((keep + page_floats - 1) / page_floats *
                                 buffer.page_bytes()));
  absl::StatusOr<int64_t> kept = CudaMemoryInUse(0);
  ASSERT_TRUE(kept.ok());
  EXPECT_NEAR(static_cast<double>(*mapped - *kept),
              static_cast<double>(whole - buffer.mapped_bytes()),
              whole / 64.0);
  EXPECT_EQ(buffer.peak_mapped_bytes(), whole);

  // Bring the second quarter back, write it, drop it after a stream's work.
  ASSERT_TRUE(buffer.Hold(keep, 2 * keep).ok());
  ASSERT_TRUE(CopyToDevice(values, buffer.data() + keep).ok());
  std::vector<float> back(keep);
  ASSERT_TRUE(CopyToHost(buffer.data() + keep, absl::MakeSpan(back)).ok());
  EXPECT_EQ(back, values);
  absl::StatusOr<OwnedCudaStream> stream = OwnedCudaStream::Create(0);
  ASSERT_TRUE(stream.ok()) << stream.status();
  ASSERT_TRUE(buffer.Drop(keep, 2 * keep, stream->get()).ok());
  ASSERT_TRUE(SynchronizeStream(stream->get()).ok());
  ASSERT_TRUE(buffer.Collect().ok());
  EXPECT_EQ(buffer.mapped_bytes(),
            static_cast<int64_t>((keep + page_floats - 1) / page_floats *
                                 buffer.page_bytes()));
  // The kept quarter kept its values.
  ASSERT_TRUE(CopyToHost(buffer.data(), absl::MakeSpan(back)).ok());
  EXPECT_EQ(back, values);
  EXPECT_EQ(buffer.Drop(keep, 2 * keep, nullptr).code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace ringside

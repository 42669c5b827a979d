// The default build's device layer: every call fails at once with
// UNIMPLEMENTED "<what>: built without CUDA: rebuild with --config=cuda",
// so that a CUDA path reached without --config=cuda says how to get one.
// Skips with --config=cuda, where the real CUDA runtime answers.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "device/cuda_device.h"
#include "device/cuda_event.h"
#include "device/cuda_stream.h"
#include "device/device_buffer.h"
#include "device/pinned_host_buffer.h"

namespace ringside {
namespace {

constexpr char kNotBuilt[] = "built without CUDA: rebuild with --config=cuda";

void ExpectNotBuilt(const absl::Status& s, const std::string& what) {
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_EQ(s.message(), what + ": " + kNotBuilt) << s;
}

class DeviceStubTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (BuiltWithCuda()) GTEST_SKIP() << "built with --config=cuda";
  }
};

TEST_F(DeviceStubTest, BuiltWithoutCudaErrorNamesWhatAndTheFix) {
  ExpectNotBuilt(BuiltWithoutCudaError("--device=cuda"), "--device=cuda");
}

TEST_F(DeviceStubTest, DeviceFactsAreNotBuilt) {
  ExpectNotBuilt(SetCudaDevice(0), "CUDA device");
  ExpectNotBuilt(CudaDeviceName(0).status(), "CUDA device");
  ExpectNotBuilt(CudaPciBusId(0).status(), "CUDA device");
}

TEST_F(DeviceStubTest, BuffersAreNotBuilt) {
  ExpectNotBuilt(DeviceBuffer::Create(0, 4).status(), "DeviceBuffer");
  DeviceBuffer empty;
  std::vector<float> host(4);
  ExpectNotBuilt(empty.CopyFromHost(host), "DeviceBuffer");
  ExpectNotBuilt(empty.ToHost().status(), "DeviceBuffer");
  ExpectNotBuilt(empty.Zero(), "DeviceBuffer");
  ExpectNotBuilt(PinnedHostBuffer::Create(4).status(), "pinned host memory");
}

TEST_F(DeviceStubTest, StreamsAndEventsAreNotBuilt) {
  ExpectNotBuilt(OwnedCudaStream::Create(0).status(), "CUDA stream");
  ExpectNotBuilt(SynchronizeStream(nullptr), "CUDA stream");
  ExpectNotBuilt(StreamWaitEvent(nullptr, nullptr), "CUDA stream");
  ExpectNotBuilt(CopyAsync(nullptr, nullptr, 1, nullptr), "CUDA stream");
  ExpectNotBuilt(OwnedCudaEvent::Create(0, true).status(), "CUDA event");
  ExpectNotBuilt(RecordEvent(nullptr, nullptr), "CUDA event");
  ExpectNotBuilt(WaitForEvent(nullptr), "CUDA event");
  ExpectNotBuilt(EventCompleted(nullptr).status(), "CUDA event");
  ExpectNotBuilt(EventSeconds(nullptr, nullptr).status(), "CUDA event");
}

}  // namespace
}  // namespace ringside

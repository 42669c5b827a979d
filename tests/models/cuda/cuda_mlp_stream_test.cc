// The readiness contract of CudaMlp on streams (models/cuda/cuda_mlp.h), as
// a data-parallel strategy uses it: backward runs on a non-blocking compute
// stream; inside on_ready(i) a comm stream waits for grad_ready_event(i),
// copies gradient i to pinned host memory and then overwrites parameters i
// with NaN (the model promised not to read them again). Every copied
// gradient must equal the CPU model's, computed with the intact parameters:
// an event recorded too early shows up as a NaN (the gradient buffer starts
// as NaN) or as a wrong value.
//
// Needs the CUDA runtime API, so it is compiled with --config=cuda only (a
// stand-in skips otherwise); skips with the reason without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/types/span.h"
#include "device/device_buffer.h"
#include "models/cuda/cuda_mlp.h"
#include "models/mlp.h"
#include "tests/models/cuda/mlp_test_data.h"
#include "tests/testing/gpu_skip.h"

namespace ringside {
namespace {

using ::ringside::testing::CompareGradient;
using ::ringside::testing::RandomBatch;
using ::ringside::testing::RandomParams;

#define ASSERT_CUDA_OK(call)                              \
  do {                                                    \
    const cudaError_t rs_error = (call);                  \
    ASSERT_EQ(rs_error, cudaSuccess)                      \
        << #call << ": " << cudaGetErrorString(rs_error); \
  } while (0)

TEST(CudaMlpStreamTest, GradientsFinalAtTheirEventsAndParamsFreeAfter) {
  SKIP_WITHOUT_GPU();
  const std::vector<int64_t> widths = {24, 48, 33, 5};
  absl::StatusOr<std::unique_ptr<Mlp>> cpu = Mlp::Create(widths);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  const TensorLayout& layout = (*cpu)->layout();
  const int64_t total = layout.total_elements();
  const std::vector<float> params = RandomParams(**cpu, 21);
  const Batch batch = RandomBatch(16, widths.front(), widths.back(), 22);
  std::vector<float> want(total);
  ASSERT_TRUE(
      (*cpu)
          ->ForwardBackward(batch, params, absl::MakeSpan(want), nullptr)
          .ok());

  absl::StatusOr<std::unique_ptr<CudaMlp>> gpu = CudaMlp::Create(widths);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  absl::StatusOr<DeviceBuffer> d_params = DeviceBuffer::Create(0, total);
  absl::StatusOr<DeviceBuffer> d_grads = DeviceBuffer::Create(0, total);
  ASSERT_TRUE(d_params.ok()) << d_params.status();
  ASSERT_TRUE(d_grads.ok()) << d_grads.status();
  ASSERT_TRUE(d_params->CopyFromHost(params).ok());
  ASSERT_CUDA_OK(cudaMemset(d_grads->data(), 0xff, total * sizeof(float)));

  cudaStream_t compute = nullptr, comm = nullptr;
  ASSERT_CUDA_OK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
  ASSERT_CUDA_OK(cudaStreamCreateWithFlags(&comm, cudaStreamNonBlocking));
  float* pinned = nullptr;
  ASSERT_CUDA_OK(
      cudaMallocHost(reinterpret_cast<void**>(&pinned), total * sizeof(float)));
  // The set-up above ran on the legacy default stream, which non-blocking
  // streams do not wait for.
  ASSERT_CUDA_OK(cudaDeviceSynchronize());

  std::vector<cudaError_t> errors;
  absl::StatusOr<double> loss = (*gpu)->ForwardBackward(
      batch, d_params->data(), d_grads->data(),
      [&](int i) {
        const TensorSpec& t = layout.tensor(i);
        const size_t bytes = t.size * sizeof(float);
        errors.push_back(
            cudaStreamWaitEvent(comm, (*gpu)->grad_ready_event(i), 0));
        errors.push_back(cudaMemcpyAsync(pinned + t.offset,
                                         d_grads->data() + t.offset, bytes,
                                         cudaMemcpyDeviceToHost, comm));
        errors.push_back(
            cudaMemsetAsync(d_params->data() + t.offset, 0xff, bytes, comm));
      },
      compute);
  ASSERT_TRUE(loss.ok()) << loss.status();
  ASSERT_CUDA_OK(cudaStreamSynchronize(comm));
  for (cudaError_t e : errors) EXPECT_EQ(e, cudaSuccess);

  const absl::Span<const float> got(pinned, total);
  for (int i = 0; i < layout.num_tensors(); ++i) {
    EXPECT_EQ(CompareGradient(layout.View(i, got),
                              layout.View(i, absl::MakeConstSpan(want))),
              "")
        << layout.tensor(i).name;
  }
  EXPECT_GT((*gpu)->last_compute_seconds(), 0.0);

  EXPECT_EQ(cudaFreeHost(pinned), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(comm), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(compute), cudaSuccess);
}

}  // namespace
}  // namespace ringside

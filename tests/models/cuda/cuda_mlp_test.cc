// The CUDA MLP (models/cuda/cuda_mlp.h) against the CPU Mlp: equal loss and
// gradients to float32 tolerance on random inputs over several widths
// (including non-multiples of 32) and batch sizes, the same readiness order
// with an event per tensor and the same parameter-use hooks, and CUDA
// errors as Status with CUDA's message; in bf16 mixed precision, the loss
// and gradients near the CPU Mlp's bf16 arithmetic and within bfloat16's
// reach of float32's.
//
// Where CUDA cannot run, the GPU tests skip and say why: "built without
// --config=cuda" in the default build, "no GPU here: <the CUDA runtime's
// message>" on a machine without a GPU or driver. The checks that need no
// GPU (the factories say why they cannot work) run everywhere.
#include "models/cuda/cuda_mlp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/relative_l2.h"
#include "device/device_buffer.h"
#include "models/cuda/cuda_optimizer.h"
#include "models/mlp.h"
#include "tests/models/cuda/mlp_test_data.h"
#include "tests/testing/gpu_skip.h"
#include "tests/testing/param_use_log.h"
#include "tests/testing/tensor_distance.h"

namespace ringside {
namespace {

using testing::Bf16Distances;
using testing::LossDistance;
using testing::MeasureBf16;

using ::ringside::testing::CompareGradient;
using ::ringside::testing::RandomBatch;
using ::ringside::testing::RandomParams;

struct Device {
  std::unique_ptr<CudaMlp> model;
  DeviceBuffer params;
  DeviceBuffer grads;
};

// The CUDA model for `widths` with `params` on device 0.
Device MustUpload(const std::vector<int64_t>& widths,
                  const std::vector<float>& params) {
  Device d;
  absl::StatusOr<std::unique_ptr<CudaMlp>> model = CudaMlp::Create(widths);
  EXPECT_TRUE(model.ok()) << model.status();
  if (!model.ok()) return d;
  d.model = *std::move(model);
  absl::StatusOr<DeviceBuffer> p = DeviceBuffer::Create(0, params.size());
  absl::StatusOr<DeviceBuffer> g = DeviceBuffer::Create(0, params.size());
  EXPECT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(g.ok()) << g.status();
  if (!p.ok() || !g.ok()) return Device{};
  d.params = *std::move(p);
  d.grads = *std::move(g);
  absl::Status s = d.params.CopyFromHost(params);
  EXPECT_TRUE(s.ok()) << s;
  return d;
}

// Runs one step on both models and compares loss, every gradient tensor,
// the readiness order and Evaluate.
void ExpectStepMatchesCpu(Mlp& cpu, Device& gpu,
                          const std::vector<float>& params,
                          const Batch& batch) {
  const TensorLayout& layout = cpu.layout();
  std::vector<float> cpu_grads(layout.total_elements());
  std::vector<int> cpu_order, gpu_order;
  absl::StatusOr<double> cpu_loss =
      cpu.ForwardBackward(batch, params, absl::MakeSpan(cpu_grads),
                          [&](int i) { cpu_order.push_back(i); });
  ASSERT_TRUE(cpu_loss.ok()) << cpu_loss.status();

  absl::StatusOr<double> gpu_loss = gpu.model->ForwardBackward(
      batch, gpu.params.data(), gpu.grads.data(),
      [&](int i) {
        EXPECT_NE(gpu.model->grad_ready_event(i), nullptr);
        gpu_order.push_back(i);
      },
      /*stream=*/nullptr);
  ASSERT_TRUE(gpu_loss.ok()) << gpu_loss.status();
  EXPECT_NEAR(*gpu_loss, *cpu_loss, 1e-5 * std::max(1.0, *cpu_loss));
  EXPECT_EQ(gpu_order, cpu_order) << absl::StrJoin(gpu_order, ",");
  EXPECT_GT(gpu.model->last_compute_seconds(), 0.0);

  absl::StatusOr<std::vector<float>> gpu_grads = gpu.grads.ToHost();
  ASSERT_TRUE(gpu_grads.ok()) << gpu_grads.status();
  for (int i = 0; i < layout.num_tensors(); ++i) {
    const TensorSpec& t = layout.tensor(i);
    EXPECT_EQ(CompareGradient(layout.View(i, absl::MakeConstSpan(*gpu_grads)),
                              layout.View(i, absl::MakeConstSpan(cpu_grads))),
              "")
        << t.name << " (batch " << batch.size << ")";
  }

  absl::StatusOr<double> cpu_eval = cpu.Evaluate(batch, params);
  absl::StatusOr<double> gpu_eval =
      gpu.model->Evaluate(batch, gpu.params.data(), nullptr);
  ASSERT_TRUE(cpu_eval.ok()) << cpu_eval.status();
  ASSERT_TRUE(gpu_eval.ok()) << gpu_eval.status();
  EXPECT_NEAR(*gpu_eval, *cpu_eval, 1e-5 * std::max(1.0, *cpu_eval));
}

using Param = std::tuple<std::vector<int64_t>, int64_t>;  // widths, batch

class CudaMlpMatchesCpuTest : public ::testing::TestWithParam<Param> {};

TEST_P(CudaMlpMatchesCpuTest, LossGradientsOrderAndEvaluate) {
  SKIP_WITHOUT_GPU();
  const auto& [widths, batch_size] = GetParam();
  absl::StatusOr<std::unique_ptr<Mlp>> cpu = Mlp::Create(widths);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  const std::vector<float> params = RandomParams(**cpu, 7);
  Device gpu = MustUpload(widths, params);
  ASSERT_NE(gpu.model, nullptr);
  EXPECT_EQ(gpu.model->layout(), (*cpu)->layout());
  const Batch batch =
      RandomBatch(batch_size, widths.front(), widths.back(), 11);
  ExpectStepMatchesCpu(**cpu, gpu, params, batch);
}

INSTANTIATE_TEST_SUITE_P(
    WidthsAndBatches, CudaMlpMatchesCpuTest,
    ::testing::Combine(::testing::Values(std::vector<int64_t>{5, 3},
                                         std::vector<int64_t>{20, 33, 10},
                                         std::vector<int64_t>{31, 257, 2},
                                         std::vector<int64_t>{64, 100, 50, 7},
                                         std::vector<int64_t>{128, 256, 128,
                                                              10}),
                       ::testing::Values(1, 13, 64)));

// bf16 mixed precision (cuda_mlp.h) against the CPU Mlp: the same
// readiness order; against the CPU Mlp in bf16 (the same rounded operands
// multiplied with float32 sums, in Eigen's order), the loss within 1e-3
// and every gradient tensor within 1e-2 relative L2; against the CPU Mlp
// in float32, within 1e-2 on the loss and 0.15 per tensor, and not equal
// (the products did round). The bounds come from the CPU's bf16 on these
// shapes and data (tests/models/mlp_test.cc, MlpBf16DistanceTest): up to
// 0.087 from float32, and up to 1.2e-3 moved by a one-ulp nudge of the
// input, the size of the differences between cuBLAS's and Eigen's sums.
// Each case records and prints what it measured on the GPU.
class CudaMlpBf16Test : public ::testing::TestWithParam<Param> {};

TEST_P(CudaMlpBf16Test, MatchesTheCpuBf16AndStaysNearFloat32) {
  SKIP_WITHOUT_GPU();
  const auto& [widths, batch_size] = GetParam();
  absl::StatusOr<std::unique_ptr<Mlp>> cpu = Mlp::Create(widths);
  absl::StatusOr<std::unique_ptr<Mlp>> cpu16 =
      Mlp::Create(widths, Precision::kBf16);
  ASSERT_TRUE(cpu.ok() && cpu16.ok());
  const std::vector<float> params = RandomParams(**cpu, 7);
  absl::StatusOr<std::unique_ptr<CudaMlp>> model =
      CudaMlp::Create(widths, 0, Precision::kBf16);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->precision(), Precision::kBf16);
  absl::StatusOr<DeviceBuffer> d_params =
      DeviceBuffer::Create(0, params.size());
  absl::StatusOr<DeviceBuffer> d_grads = DeviceBuffer::Create(0, params.size());
  ASSERT_TRUE(d_params.ok() && d_grads.ok());
  ASSERT_TRUE(d_params->CopyFromHost(params).ok());
  const Batch batch =
      RandomBatch(batch_size, widths.front(), widths.back(), 11);

  const TensorLayout& layout = (*cpu)->layout();
  std::vector<float> cpu_grads(layout.total_elements());
  std::vector<float> cpu16_grads(layout.total_elements());
  std::vector<int> cpu_order, gpu_order;
  absl::StatusOr<double> cpu_loss =
      (*cpu)->ForwardBackward(batch, params, absl::MakeSpan(cpu_grads),
                              [&](int i) { cpu_order.push_back(i); });
  absl::StatusOr<double> cpu16_loss =
      (*cpu16)->ForwardBackward(batch, params, absl::MakeSpan(cpu16_grads), {});
  ASSERT_TRUE(cpu_loss.ok() && cpu16_loss.ok());
  absl::StatusOr<double> gpu_loss = (*model)->ForwardBackward(
      batch, d_params->data(), d_grads->data(),
      [&](int i) { gpu_order.push_back(i); }, /*stream=*/nullptr);
  ASSERT_TRUE(gpu_loss.ok()) << gpu_loss.status();
  EXPECT_EQ(gpu_order, cpu_order);
  absl::StatusOr<std::vector<float>> gpu_grads = d_grads->ToHost();
  ASSERT_TRUE(gpu_grads.ok()) << gpu_grads.status();
  const Bf16Distances d =
      MeasureBf16(layout, *gpu_loss, *gpu_grads, *cpu16_loss, cpu16_grads,
                  *cpu_loss, cpu_grads);
  EXPECT_LE(d.loss_vs_bf16, 1e-3);
  EXPECT_LE(d.loss_vs_fp32, 1e-2);
  EXPECT_LE(d.grads_vs_bf16.distance, 1e-2)
      << d.grads_vs_bf16.name << " against the CPU bf16";
  EXPECT_LE(d.grads_vs_fp32.distance, 0.15)
      << d.grads_vs_fp32.name << " against float32";
  // float32 products match the CPU model (the float32 test); bf16 operands
  // cannot.
  EXPECT_GT(d.grads_vs_fp32.distance, 1e-4)
      << "the products did not round to bfloat16";
  d.Report(absl::StrCat("gpu bf16, widths ", absl::StrJoin(widths, "-"),
                        ", batch ", batch_size));

  absl::StatusOr<double> cpu_eval = (*cpu16)->Evaluate(batch, params);
  absl::StatusOr<double> gpu_eval =
      (*model)->Evaluate(batch, d_params->data(), nullptr);
  ASSERT_TRUE(cpu_eval.ok() && gpu_eval.ok());
  EXPECT_LE(LossDistance(*gpu_eval, *cpu_eval), 1e-3);
}

INSTANTIATE_TEST_SUITE_P(
    WidthsAndBatches, CudaMlpBf16Test,
    ::testing::Combine(::testing::Values(std::vector<int64_t>{20, 33, 10},
                                         std::vector<int64_t>{64, 100, 50, 7},
                                         std::vector<int64_t>{784, 512, 512,
                                                              10}),
                       ::testing::Values(13, 64)));

TEST(CudaMlpTest, ReusesScratchAcrossBatchSizes) {
  SKIP_WITHOUT_GPU();
  const std::vector<int64_t> widths = {17, 40, 9};
  absl::StatusOr<std::unique_ptr<Mlp>> cpu = Mlp::Create(widths);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  const std::vector<float> params = RandomParams(**cpu, 3);
  Device gpu = MustUpload(widths, params);
  ASSERT_NE(gpu.model, nullptr);
  uint64_t seed = 100;
  for (int64_t size : {5, 96, 7, 96}) {
    SCOPED_TRACE(absl::StrCat("batch ", size));
    ExpectStepMatchesCpu(**cpu, gpu, params, RandomBatch(size, 17, 9, ++seed));
  }
}

// The parameter-use hooks (zero3 on a device) come in the CPU Mlp's order,
// at enqueue time; Evaluate calls none, nor a model whose hooks were taken
// back.
TEST(CudaMlpTest, ReportsParameterUseAsTheCpuMlp) {
  SKIP_WITHOUT_GPU();
  const std::vector<int64_t> widths = {5, 7, 6, 3};
  absl::StatusOr<std::unique_ptr<Mlp>> cpu = Mlp::Create(widths);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  const std::vector<float> params = RandomParams(**cpu, 5);
  Device gpu = MustUpload(widths, params);
  ASSERT_NE(gpu.model, nullptr);
  ASSERT_TRUE(gpu.model->ReportsParamUse());
  testing::ParamUseLog cpu_log, gpu_log;
  (*cpu)->SetParamUseHooks(&cpu_log.hooks);
  gpu.model->SetParamUseHooks(&gpu_log.hooks);
  const Batch batch = RandomBatch(4, 5, 3, 9);
  std::vector<float> cpu_grads(params.size());
  ASSERT_TRUE((*cpu)
                  ->ForwardBackward(batch, params, absl::MakeSpan(cpu_grads),
                                    cpu_log.Ready())
                  .ok());
  ASSERT_TRUE(gpu.model
                  ->ForwardBackward(batch, gpu.params.data(), gpu.grads.data(),
                                    gpu_log.Ready(), /*stream=*/nullptr)
                  .ok());
  EXPECT_EQ(gpu_log.calls, cpu_log.calls) << absl::StrJoin(gpu_log.calls, ",");
  gpu_log.calls.clear();
  ASSERT_TRUE(gpu.model->Evaluate(batch, gpu.params.data(), nullptr).ok());
  gpu.model->SetParamUseHooks(nullptr);
  ASSERT_TRUE(gpu.model
                  ->ForwardBackward(batch, gpu.params.data(), gpu.grads.data(),
                                    {}, nullptr)
                  .ok());
  EXPECT_TRUE(gpu_log.calls.empty()) << absl::StrJoin(gpu_log.calls, ",");
}

TEST(CudaMlpTest, InitDeviceParamsEqualsCpuInit) {
  SKIP_WITHOUT_GPU();
  const std::vector<int64_t> widths = {10, 33, 4};
  absl::StatusOr<std::unique_ptr<Mlp>> cpu = Mlp::Create(widths);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  std::vector<float> want((*cpu)->layout().total_elements());
  (*cpu)->InitParams(42, absl::MakeSpan(want));
  Device gpu = MustUpload(widths, std::vector<float>(want.size(), 0.0f));
  ASSERT_NE(gpu.model, nullptr);
  ASSERT_TRUE(gpu.model->InitDeviceParams(42, gpu.params.data()).ok());
  absl::StatusOr<std::vector<float>> got = gpu.params.ToHost();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, want);
}

TEST(CudaMlpTest, RejectsBatchesThatDoNotFit) {
  SKIP_WITHOUT_GPU();
  const std::vector<int64_t> widths = {4, 3};
  Device gpu = MustUpload(widths, std::vector<float>(4 * 3 + 3, 0.0f));
  ASSERT_NE(gpu.model, nullptr);
  Batch bad_label = RandomBatch(2, 4, 3, 1);
  bad_label.labels[1] = 3;
  EXPECT_EQ(gpu.model
                ->ForwardBackward(bad_label, gpu.params.data(),
                                  gpu.grads.data(), nullptr, nullptr)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  Batch short_features = RandomBatch(2, 4, 3, 1);
  short_features.features.pop_back();
  EXPECT_EQ(gpu.model->Evaluate(short_features, gpu.params.data(), nullptr)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CudaMlpTest, CudaErrorsCarryCudaMessage) {
  SKIP_WITHOUT_GPU();
  std::vector<float> host(16, 1.0f);
  absl::Status bad_copy =
      CopyToDevice(host, reinterpret_cast<float*>(uintptr_t{0x10}));
  EXPECT_FALSE(bad_copy.ok());
  EXPECT_NE(bad_copy.message().find("cudaMemcpy"), std::string::npos)
      << bad_copy;
  EXPECT_NE(bad_copy.message().find("device/device_buffer.cc:"),
            std::string::npos)
      << bad_copy;
  EXPECT_NE(bad_copy.message().find("cudaError"), std::string::npos)
      << bad_copy;

  const size_t petabyte_floats = (size_t{1} << 50) / sizeof(float);
  absl::StatusOr<DeviceBuffer> huge = DeviceBuffer::Create(0, petabyte_floats);
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kResourceExhausted)
      << huge.status();
  EXPECT_NE(huge.status().message().find("cudaErrorMemoryAllocation"),
            std::string::npos)
      << huge.status();

  // The failures left nothing behind: a model still trains.
  const std::vector<int64_t> widths = {6, 5, 3};
  absl::StatusOr<std::unique_ptr<Mlp>> cpu = Mlp::Create(widths);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  const std::vector<float> params = RandomParams(**cpu, 5);
  Device gpu = MustUpload(widths, params);
  ASSERT_NE(gpu.model, nullptr);
  ExpectStepMatchesCpu(**cpu, gpu, params, RandomBatch(8, 6, 3, 9));
}

// Runs where CUDA cannot: every factory says why, with CUDA's message (or
// the build's), instead of crashing or pretending.
TEST(CudaMlpTest, WithoutGpuFactoriesSayWhy) {
  if (testing::GpuUnavailableReason().empty()) {
    GTEST_SKIP() << "this machine has a GPU";
  }
  const bool built = testing::BuiltWithCuda();
  const absl::Status statuses[] = {
      CudaMlp::Create({4, 3}).status(),
      DeviceBuffer::Create(0, 16).status(),
      CudaOptimizer::Create(OptimizerConfig{}, 16).status(),
  };
  for (const absl::Status& s : statuses) {
    EXPECT_FALSE(s.ok());
    if (built) {
      // e.g. "cudaSetDevice(device) [models/cuda/...]:
      // cudaErrorInsufficientDriver: CUDA driver version is insufficient..."
      EXPECT_NE(s.message().find("cudaError"), std::string::npos) << s;
    } else {
      EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
      EXPECT_NE(s.message().find("--config=cuda"), std::string::npos) << s;
    }
  }
}

TEST(CudaMlpTest, CreateRejectsBadWidths) {
  SKIP_WITHOUT_CUDA_BUILD();
  // Checked before touching the device, so this runs without a GPU too.
  EXPECT_EQ(CudaMlp::Create({5}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CudaMlp::Create({5, 0, 3}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CudaMlp::Create({5, int64_t{1} << 31}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ringside

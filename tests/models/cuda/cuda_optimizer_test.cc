// The device optimizers (models/cuda/cuda_optimizer.h) against the host
// ones (models/optimizer.h): after several steps with fresh random gradients
// the parameters agree (the kernels round as the host does, so they should
// be bit-equal; the check allows 2 ulp), with the device applying the
// update in two chunks through state_offset and the host all at once.
// GPU tests skip with the reason where CUDA cannot run.
#include "models/cuda/cuda_optimizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "device/device_buffer.h"
#include "models/optimizer.h"
#include "tests/testing/gpu_skip.h"

namespace ringside {
namespace {

std::vector<float> Random(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

// "" if within 2 ulp everywhere, else the first mismatch.
std::string Compare(const std::vector<float>& got,
                    const std::vector<float>& want) {
  for (size_t i = 0; i < want.size(); ++i) {
    const float ulp =
        std::nextafter(std::abs(want[i]), INFINITY) - std::abs(want[i]);
    if (!(std::abs(got[i] - want[i]) <= 2 * ulp)) {
      return absl::StrCat("param ", i, ": ", got[i], " vs ", want[i]);
    }
  }
  return "";
}

OptimizerConfig Sgd(float momentum, float weight_decay) {
  OptimizerConfig c;
  c.type = "sgd";
  c.lr = 0.05f;
  c.momentum = momentum;
  c.weight_decay = weight_decay;
  return c;
}

OptimizerConfig Adam(float weight_decay) {
  OptimizerConfig c;
  c.type = "adam";
  c.lr = 1e-3f;
  c.weight_decay = weight_decay;
  return c;
}

class CudaOptimizerMatchesCpuTest
    : public ::testing::TestWithParam<OptimizerConfig> {};

TEST_P(CudaOptimizerMatchesCpuTest, SeveralStepsInTwoChunks) {
  SKIP_WITHOUT_GPU();
  constexpr int64_t kN = 1000;     // not a multiple of the block size
  constexpr int64_t kSplit = 333;  // device applies [0, 333) and [333, 1000)
  const OptimizerConfig& config = GetParam();
  absl::StatusOr<std::unique_ptr<Optimizer>> cpu =
      Optimizer::Create(config, kN);
  absl::StatusOr<std::unique_ptr<CudaOptimizer>> gpu =
      CudaOptimizer::Create(config, kN);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  EXPECT_EQ((*gpu)->state_bytes(), (*cpu)->state_bytes());

  std::vector<float> params = Random(kN, 1);
  absl::StatusOr<DeviceBuffer> d_params = DeviceBuffer::Create(0, kN);
  absl::StatusOr<DeviceBuffer> d_grads = DeviceBuffer::Create(0, kN);
  ASSERT_TRUE(d_params.ok()) << d_params.status();
  ASSERT_TRUE(d_grads.ok()) << d_grads.status();
  ASSERT_TRUE(d_params->CopyFromHost(params).ok());

  for (int64_t step = 1; step <= 5; ++step) {
    const std::vector<float> grads = Random(kN, 100 + step);
    ASSERT_TRUE(d_grads->CopyFromHost(grads).ok());
    (*cpu)->Apply(0, absl::MakeSpan(params), grads, step);
    float* p = d_params->data();
    const float* g = d_grads->data();
    ASSERT_TRUE((*gpu)->Apply(0, p, g, kSplit, step, nullptr).ok());
    ASSERT_TRUE(
        (*gpu)
            ->Apply(kSplit, p + kSplit, g + kSplit, kN - kSplit, step, nullptr)
            .ok());
    absl::StatusOr<std::vector<float>> got = d_params->ToHost();
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(Compare(*got, params), "") << "step " << step;
  }
}

// The two optimizers with a 3-update warm-up: the rate of every update
// (OptimizerConfig::LrAt) is the same float on both.
OptimizerConfig WarmedUp(OptimizerConfig c) {
  c.lr_warmup_steps = 3;
  return c;
}

INSTANTIATE_TEST_SUITE_P(Configs, CudaOptimizerMatchesCpuTest,
                         ::testing::Values(Sgd(0.0f, 0.0f), Sgd(0.9f, 0.0f),
                                           Sgd(0.9f, 1e-2f), Adam(0.0f),
                                           Adam(1e-2f),
                                           WarmedUp(Sgd(0.9f, 1e-2f)),
                                           WarmedUp(Adam(1e-2f))));

TEST(CudaOptimizerTest, ApplyRejectsBadRanges) {
  SKIP_WITHOUT_GPU();
  absl::StatusOr<std::unique_ptr<CudaOptimizer>> gpu =
      CudaOptimizer::Create(Adam(0.0f), 10);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  absl::StatusOr<DeviceBuffer> buf = DeviceBuffer::Create(0, 10);
  ASSERT_TRUE(buf.ok()) << buf.status();
  float* p = buf->data();
  EXPECT_EQ((*gpu)->Apply(5, p, p, 6, 1, nullptr).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*gpu)->Apply(-1, p, p, 1, 1, nullptr).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*gpu)->Apply(0, p, p, 10, 0, nullptr).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*gpu)->Apply(0, nullptr, p, 10, 1, nullptr).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CudaOptimizerTest, CreateRejectsBadConfig) {
  SKIP_WITHOUT_CUDA_BUILD();
  // Checked before touching the device, so this runs without a GPU too.
  OptimizerConfig bad = Sgd(0.9f, 0.0f);
  bad.lr = -1.0f;
  EXPECT_EQ(CudaOptimizer::Create(bad, 10).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CudaOptimizer::Create(Sgd(0.9f, 0.0f), -1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ringside

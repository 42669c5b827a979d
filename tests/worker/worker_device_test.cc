// The worker binary's --device/--gpus paths. The error paths run on every
// machine: in a build without CUDA, --device=cuda must fail with "built
// without CUDA: rebuild with --config=cuda"; in a CUDA build on a machine
// without a GPU, with CUDA's own "no GPU here" message. Bad --gpus and
// --device values are flag errors (exit 2) everywhere. On a GPU machine
// (--config=cuda) a short baseline run must report "device":"cuda" and
// "timing":"cuda_events".
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "collectives/nccl_collective.h"
#include "device/cuda_device.h"
#include "tests/testing/gpu_skip.h"

namespace ringside {
namespace {

struct Outcome {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// Runs the worker binary with `args` (and small defaults); blocking.
Outcome RunWorker(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {
      absl::StrCat(std::getenv("TEST_SRCDIR"), "/ringside/worker/worker"),
      "--mlp_widths=8,16,4",
      "--train_examples=256",
      "--eval_examples=32",
      "--steps=4",
      "--warmup_steps=1",
      "--batch_size=8"};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string command = absl::StrCat(absl::StrJoin(argv, " "), " 2>&1");
  Outcome out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    out.output.append(buffer, n);
  }
  const int status = pclose(pipe);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

bool HasGpu() { return CudaDeviceCount().ok(); }

TEST(WorkerDeviceTest, CudaWithoutCudaOrGpuSaysWhy) {
  if (HasGpu()) GTEST_SKIP() << "a GPU is here: the error path cannot run";
  const Outcome out = RunWorker({"--device=cuda"});
  if (!BuiltWithCuda()) {
    EXPECT_EQ(out.exit_code, 2) << out.output;
    EXPECT_NE(out.output.find("built without CUDA: rebuild with --config=cuda"),
              std::string::npos)
        << out.output;
  } else {
    EXPECT_EQ(out.exit_code, 1) << out.output;
    EXPECT_NE(out.output.find("no GPU here"), std::string::npos) << out.output;
  }
}

TEST(WorkerDeviceTest, CudaSupportsTheMlpAndTheCharLm) {
  const Outcome out = RunWorker({"--device=cuda", "--model=synthetic"});
  EXPECT_EQ(out.exit_code, 2) << out.output;
  const std::string want =
      BuiltWithCuda()
          ? "--device=cuda supports --model=mlp and --model=charlm, got "
            "--model=synthetic"
          : "built without CUDA: rebuild with --config=cuda";
  EXPECT_NE(out.output.find(want), std::string::npos) << out.output;
}

TEST(WorkerDeviceTest, BadGpusAreFlagErrors) {
  for (const char* gpus : {"--gpus=a", "--gpus=0,-1", "--gpus=0,"}) {
    const Outcome out = RunWorker({"--device=cuda", gpus});
    EXPECT_EQ(out.exit_code, 2) << gpus << ": " << out.output;
    EXPECT_NE(out.output.find("is not a CUDA device index"), std::string::npos)
        << out.output;
  }
}

TEST(WorkerDeviceTest, GpusNeedCuda) {
  const Outcome out = RunWorker({"--gpus=0"});
  EXPECT_EQ(out.exit_code, 2) << out.output;
  EXPECT_NE(out.output.find("--gpus needs --device=cuda"), std::string::npos)
      << out.output;
}

TEST(WorkerDeviceTest, UnknownDeviceIsAFlagError) {
  const Outcome out = RunWorker({"--device=tpu"});
  EXPECT_EQ(out.exit_code, 2) << out.output;
  EXPECT_NE(out.output.find("--device must be cpu or cuda"), std::string::npos)
      << out.output;
}

TEST(WorkerDeviceTest, CpuRecordSaysCpu) {
  const Outcome out = RunWorker({"--device=cpu"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("\"device\":\"cpu\""), std::string::npos)
      << out.output;
}

// GPU machines only from here.

TEST(WorkerDeviceTest, GpusBeyondTheDevicesAreFlagErrors) {
  SKIP_WITHOUT_GPU();
  absl::StatusOr<int> count = CudaDeviceCount();
  const Outcome out =
      RunWorker({"--device=cuda", absl::StrCat("--gpus=", *count)});
  EXPECT_EQ(out.exit_code, 2) << out.output;
  EXPECT_NE(out.output.find("device(s)"), std::string::npos) << out.output;
}

nlohmann::json FinalRecord(const std::string& output) {
  nlohmann::json final_record;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    if (line.empty() || line.front() != '{') continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.value("event", "") == "final") final_record = j;
  }
  return final_record;
}

// The character transformer trains on the GPU like on the CPU: same data,
// same seed, so the final validation loss agrees to float32 rounding.
TEST(WorkerDeviceTest, CudaCharLmMatchesTheCpuWorker) {
  SKIP_WITHOUT_GPU();
  absl::StatusOr<int> count = CudaDeviceCount();
  const std::vector<std::string> model = {
      "--model=charlm", "--n_layer=1", "--n_head=2", "--n_embd=16",
      "--block_size=8", "--steps=6", "--optimizer=adam", "--lr=0.003"};
  std::vector<std::string> gpu = model, cpu = model;
  gpu.insert(gpu.end(), {"--device=cuda", "--gpus=0"});
  const Outcome on_gpu = RunWorker(gpu);
  const Outcome on_cpu = RunWorker(cpu);
  ASSERT_EQ(on_gpu.exit_code, 0) << on_gpu.output;
  ASSERT_EQ(on_cpu.exit_code, 0) << on_cpu.output;
  const nlohmann::json g = FinalRecord(on_gpu.output);
  const nlohmann::json c = FinalRecord(on_cpu.output);
  ASSERT_TRUE(g.is_object() && c.is_object()) << on_gpu.output;
  EXPECT_EQ(g["device"], "cuda");
  EXPECT_EQ(g["model"], "charlm");
  EXPECT_NEAR(g["eval_loss"].get<double>(), c["eval_loss"].get<double>(),
              1e-3 * c["eval_loss"].get<double>());
}

TEST(WorkerDeviceTest, CudaBaselineRecordsCudaEventTiming) {
  SKIP_WITHOUT_GPU();
  absl::StatusOr<int> count = CudaDeviceCount();
  const Outcome out = RunWorker({"--device=cuda", "--gpus=0"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  nlohmann::json final_record;
  for (absl::string_view line : absl::StrSplit(out.output, '\n')) {
    if (line.empty() || line.front() != '{') continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.value("event", "") == "final") final_record = j;
  }
  ASSERT_TRUE(final_record.is_object()) << out.output;
  EXPECT_EQ(final_record["device"], "cuda");
  EXPECT_EQ(final_record["timing"], "cuda_events");
  EXPECT_EQ(final_record["gpu"], 0);
  EXPECT_GT(final_record["compute_s"].get<double>(), 0.0);
  EXPECT_GT(final_record["utilization"].get<double>(), 0.0);
  EXPECT_LE(final_record["utilization"].get<double>(), 1.0);
  const std::string check = final_record["utilization_check"];
  EXPECT_TRUE(check == "nvml" || check == "none") << check;
  if (check == "nvml") {
    EXPECT_GE(final_record["nvml_utilization"].get<double>(), 0.0);
    EXPECT_LE(final_record["nvml_utilization"].get<double>(), 1.0);
  }
}

}  // namespace
}  // namespace ringside

#include "worker/device_selection.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace ringside {

absl::StatusOr<Device> ParseDevice(absl::string_view text) {
  if (text == "cpu") return Device::kCpu;
  if (text == "cuda") return Device::kCuda;
  return absl::InvalidArgumentError(
      absl::StrCat("--device must be cpu or cuda, got '", text, "'"));
}

const char* DeviceName(Device device) {
  return device == Device::kCuda ? "cuda" : "cpu";
}

absl::StatusOr<std::vector<int>> ParseGpuList(absl::string_view text) {
  std::vector<int> gpus;
  if (text.empty()) return gpus;
  for (absl::string_view entry : absl::StrSplit(text, ',')) {
    int index = -1;
    if (!absl::SimpleAtoi(entry, &index) || index < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--gpus: '", entry,
                       "' is not a CUDA device index (want e.g. --gpus=0,1)"));
    }
    gpus.push_back(index);
  }
  return gpus;
}

int LocalRankFromEnv(int rank) {
  for (const char* name :
       {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"}) {
    int value = -1;
    const char* text = std::getenv(name);
    if (text != nullptr && absl::SimpleAtoi(text, &value) && value >= 0) {
      return value;
    }
  }
  return rank;
}

absl::Status CheckPrecision(Precision precision, Device device) {
  if (precision == Precision::kFp32 || device == Device::kCuda) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--precision=", PrecisionName(precision),
      " needs --device=cuda: a CPU worker trains in float32 (its Eigen "
      "kernels have no bfloat16 matrix products; the CPU models' bf16 "
      "arithmetic, at float32's speed, serves the tests as a reference)"));
}

absl::StatusOr<int> ChooseCudaDevice(const std::vector<int>& gpus,
                                     int local_rank, int device_count) {
  if (device_count < 1) {
    return absl::InvalidArgumentError("no CUDA device to choose from");
  }
  if (local_rank < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("local rank must be >= 0, got ", local_rank));
  }
  if (gpus.empty()) return local_rank % device_count;
  if (local_rank >= static_cast<int>(gpus.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("--gpus=", absl::StrJoin(gpus, ","), " lists ",
                     gpus.size(), " device(s), but local rank ", local_rank,
                     " needs one: give one per local rank"));
  }
  const int device = gpus[local_rank];
  if (device >= device_count) {
    return absl::InvalidArgumentError(
        absl::StrCat("--gpus gives local rank ", local_rank, " CUDA device ",
                     device, ", but this process sees ", device_count,
                     " device(s) (0..", device_count - 1, ")"));
  }
  return device;
}

}  // namespace ringside

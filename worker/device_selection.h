// Which device a worker computes on: the --device, --gpus and --precision
// flags and the mapping of a process's local rank to a CUDA device. Plain C++
// (no CUDA), so the flag errors are the same in every build. Thread-safe (pure
// functions; LocalRankFromEnv reads the environment).
#ifndef RINGSIDE_WORKER_DEVICE_SELECTION_H_
#define RINGSIDE_WORKER_DEVICE_SELECTION_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/device.h"
#include "models/precision.h"

namespace ringside {

// --device: "cpu" or "cuda"; INVALID_ARGUMENT otherwise.
absl::StatusOr<Device> ParseDevice(absl::string_view text);
// "cpu" or "cuda".
const char* DeviceName(Device device);

// Whether a worker on `device` computes in `precision`: float32 everywhere,
// bf16 on CUDA workers (which models have bf16 arithmetic is MakeModel's
// to say). INVALID_ARGUMENT saying what is missing otherwise.
absl::Status CheckPrecision(Precision precision, Device device);

// --gpus: empty (none given: pick by local rank) or comma-separated CUDA
// device indices >= 0, e.g. "0,1,3". INVALID_ARGUMENT naming the bad entry.
absl::StatusOr<std::vector<int>> ParseGpuList(absl::string_view text);

// This process's position among the job's processes on its host: the
// launcher's LOCAL_RANK (torchrun), OMPI_COMM_WORLD_LOCAL_RANK (Open MPI)
// or SLURM_LOCALID (SLURM), else `rank` (every rank on one host, as
// experiments/launch starts them).
int LocalRankFromEnv(int rank);

// The CUDA device of local rank `local_rank` among `device_count` visible
// devices: gpus[local_rank] when --gpus was given, else local_rank modulo
// device_count (several ranks share a GPU when there are more ranks than
// GPUs: fine for the parameter-server strategies, refused by NCCL).
// INVALID_ARGUMENT when gpus lists fewer entries than local_rank + 1 or
// names a device >= device_count, or device_count < 1.
absl::StatusOr<int> ChooseCudaDevice(const std::vector<int>& gpus,
                                     int local_rank, int device_count);

}  // namespace ringside

#endif  // RINGSIDE_WORKER_DEVICE_SELECTION_H_

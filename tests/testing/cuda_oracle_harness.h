// The equivalence oracle (oracle_harness.h) for CUDA workers: N workers as
// threads, each with its own CudaMlp on the GPU its rank is given, training
// through TrainOnCuda (worker/cuda_trainer.h) with in-process parameter
// servers when the strategy needs them and one in-memory rendezvous store
// (NCCL and Gloo groups of ranks as threads). The reference stays the CPU
// baseline with batch N*b (RunReference), so a pass also says that the GPU
// path equals the CPU one to float32 tolerance. testonly; blocking; not
// thread-safe. Without CUDA or a GPU every call fails with the reason.
#ifndef RINGSIDE_TESTS_TESTING_CUDA_ORACLE_HARNESS_H_
#define RINGSIDE_TESTS_TESTING_CUDA_ORACLE_HARNESS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/testing/oracle_harness.h"
#include "worker/trainer.h"

namespace ringside::testing {

// One CUDA worker per entry of `gpus` (rank r on CUDA device gpus[r]) with
// `strategy`, after starting setup.num_servers parameter servers when > 0,
// each CudaMlp computing in setup.model.precision. Each rank's final
// record lands in *finals when not null.
absl::StatusOr<OracleRun> RunCudaWorkers(
    const OracleSetup& setup, const std::string& strategy,
    const std::vector<int>& gpus,
    std::vector<nlohmann::json>* finals = nullptr);

}  // namespace ringside::testing

#endif  // RINGSIDE_TESTS_TESTING_CUDA_ORACLE_HARNESS_H_

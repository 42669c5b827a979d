#include "experiments/comparison/ddp_availability.h"

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "experiments/job/local_job.h"

namespace ringside::compare {

absl::StatusOr<DdpPeer> FindDdp(const char* argv0, const DdpOptions& ddp,
                                const std::string& model) {
  if (!ddp.enabled) {
    return absl::FailedPreconditionError("--noddp was given");
  }
  if (model != "mlp" && model != "charlm") {
    return absl::FailedPreconditionError(absl::StrCat(
        "the DDP peer trains --model=mlp and --model=charlm, not --model=",
        model, " (a profile's emulated compute has no PyTorch model)"));
  }
  std::string script = ddp.peer_script;
  if (script.empty()) {
    absl::StatusOr<std::string> found =
        FindBinary(argv0, "experiments/ddp_peer.py");
    if (!found.ok()) return found.status();
    script = *found;
  }
  return FindDdpPeer(ddp.torch_python, script, absl::Minutes(1));
}

std::string DdpNote(const absl::StatusOr<DdpPeer>& ddp) {
  if (!ddp.ok()) {
    return absl::StrCat("PyTorch DDP row absent: ", ddp.status().message(),
                        ".");
  }
  return absl::StrCat(
      "PyTorch DDP: torch ", ddp->torch_version, " (", ddp->python,
      ") DistributedDataParallel with its default buckets (25 MB, 1 MB "
      "first), gloo on CPU (NCCL on CUDA), one intra-op thread, on the "
      "workers' own data and initial parameters (worker --export_batches); "
      "compute = forward + backward up to the last gradient + optimizer "
      "step; traffic is the ring all-reduce volume, DDP does not report "
      "its own.");
}

}  // namespace ringside::compare

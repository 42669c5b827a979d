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
  const bool own_model = !ddp.torch_model.empty();
  if (own_model && model != "synthetic") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--torch_model goes with --model=synthetic --profile=FILE (the "
        "profile exported from that model); --model=",
        model, " trains on its own exported data"));
  }
  if (own_model && ddp.torch_input.empty()) {
    return absl::InvalidArgumentError(
        "--torch_model needs --torch_input (one example's shape, e.g. "
        "3,224,224)");
  }
  if (!own_model && model != "mlp" && model != "charlm") {
    return absl::FailedPreconditionError(absl::StrCat(
        "the DDP peer trains --model=mlp and --model=charlm from their "
        "exported data, or a PyTorch model given as --torch_model=module:"
        "factory with --torch_input; --model=",
        model, " has no PyTorch model"));
  }
  std::string script = ddp.peer_script;
  if (script.empty()) {
    absl::StatusOr<std::string> found =
        FindBinary(argv0, "experiments/ddp_peer.py");
    if (!found.ok()) return found.status();
    script = *found;
  }
  absl::StatusOr<DdpPeer> peer =
      FindDdpPeer(ddp.torch_python, script, absl::Minutes(1));
  if (peer.ok()) {
    peer->torch_model = ddp.torch_model;
    peer->torch_input = ddp.torch_input;
  }
  return peer;
}

std::string DdpNote(const absl::StatusOr<DdpPeer>& ddp) {
  if (!ddp.ok()) {
    return absl::StrCat("PyTorch DDP row absent: ", ddp.status().message(),
                        ".");
  }
  if (!ddp->torch_model.empty()) {
    return absl::StrCat(
        "PyTorch DDP: torch ", ddp->torch_version, " (", ddp->python,
        ") DistributedDataParallel with its default buckets, gloo on CPU "
        "(NCCL on CUDA), one intra-op thread, training ",
        ddp->torch_model,
        " with real compute on random inputs of shape (batch, ",
        ddp->torch_input,
        ") and its outputs' mean square as the loss; ringside's rows emulate "
        "the profile's compute. Compare the rows' communication overhead "
        "per step (step − own compute), not their throughput or loss.");
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

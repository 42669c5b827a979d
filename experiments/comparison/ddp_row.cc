#include "experiments/comparison/ddp_row.h"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "experiments/job/process_group.h"

namespace ringside {

ListedStrategy DdpListing() {
  ListedStrategy ddp;
  ddp.name = kDdpStrategy;
  ddp.store = true;
  ddp.display_name = "PyTorch DDP";
  ddp.study_order = 1000;
  ddp.modelled_as = "ring";
  ddp.gpu_per_rank = true;  // NCCL on CUDA workers
  return ddp;
}
namespace {

using nlohmann::json;

constexpr char kProbe[] =
    "import json, torch, torch.distributed as d; "
    "print(json.dumps({'torch': torch.__version__, "
    "'distributed': d.is_available()}))";

constexpr char kHowTo[] =
    "make one with `python3 -m venv ~/torchenv && ~/torchenv/bin/pip "
    "install torch` and pass --torch_python=$HOME/torchenv/bin/python";

}  // namespace

absl::StatusOr<DdpPeer> FindDdpPeer(const std::string& python,
                                    const std::string& script,
                                    absl::Duration timeout) {
  if (script.empty() || access(script.c_str(), R_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the DDP peer script '", script, "' is not readable (--ddp_peer)"));
  }
  ProcessGroupOptions options;
  options.deadline = timeout;
  options.relay_stderr = false;
  options.stderr_tail_lines = 3;
  ChildSpec spec;
  spec.label = python;
  spec.argv = {python, "-c", kProbe};
  json answer;
  spec.on_stdout_line = [&answer](const std::string&, absl::string_view line) {
    answer = json::parse(line, nullptr, /*allow_exceptions=*/false);
  };
  if (absl::Status s = RunToCompletion(std::move(spec), options); !s.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "`", python, " -c 'import torch'` failed (", s.message(),
        "); PyTorch comes from PyPI into a virtual environment: ", kHowTo));
  }
  if (!answer.is_object() || !answer.value("distributed", false)) {
    return absl::FailedPreconditionError(
        absl::StrCat("torch in ", python, " has no torch.distributed (",
                     answer.dump(), ")"));
  }
  return DdpPeer{python, script, answer.value("torch", "?")};
}

absl::Status ExportJobData(const std::string& worker_bin, int n,
                           const std::vector<std::string>& worker_args,
                           const std::string& dir, absl::Duration timeout) {
  ProcessGroupOptions options;
  options.deadline = timeout;
  options.relay_stderr = false;
  ChildSpec spec;
  spec.label = "worker --export_batches";
  spec.argv = {worker_bin, "--rank=0", absl::StrCat("--world_size=", n)};
  spec.argv.insert(spec.argv.end(), worker_args.begin(), worker_args.end());
  spec.argv.push_back(absl::StrCat("--export_batches=", dir));
  spec.on_stdout_line = [](const std::string&, absl::string_view) {};
  if (absl::Status s = RunToCompletion(std::move(spec), options); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("exporting the job's data to ",
                                               dir, ": ", s.message()));
  }
  return absl::OkStatus();
}

void UseDdpPeer(const DdpPeer& peer, const std::string& data_dir,
                LocalJobOptions* options) {
  options->worker_bin = peer.python;
  options->worker_prefix_args = {peer.script};
  options->strategy = kDdpStrategy;
  options->num_servers = 0;
  options->rendezvous = true;
  options->timeline.clear();
  if (peer.torch_model.empty()) {
    options->worker_args.insert(options->worker_args.begin(),
                                absl::StrCat("--data_dir=", data_dir));
  } else {
    options->worker_args.insert(
        options->worker_args.begin(),
        {absl::StrCat("--torch_model=", peer.torch_model),
         absl::StrCat("--input=", peer.torch_input)});
  }
}

}  // namespace ringside

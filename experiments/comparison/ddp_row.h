// The "PyTorch DDP" row of compare: the reference that ringside's
// all-reduce strategies are held against. The row runs
// experiments/ddp_peer.py under a Python whose `import torch` works, on the
// very data the workers train on (worker --export_batches), launched like
// the workers (local_job.h). Where it cannot run, FindDdpPeer says why, and
// compare prints that instead of the row.
//
// Thread-safety: the functions are blocking and independent.
#ifndef RINGSIDE_EXPERIMENTS_COMPARISON_DDP_ROW_H_
#define RINGSIDE_EXPERIMENTS_COMPARISON_DDP_ROW_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "experiments/job/local_job.h"
#include "experiments/report/report.h"

namespace ringside {

struct DdpPeer {
  std::string python;         // the interpreter, e.g. ~/torchenv/bin/python
  std::string script;         // experiments/ddp_peer.py
  std::string torch_version;  // what `import torch` reported
  // Non-empty: the peer trains this PyTorch model (module:factory) on
  // random inputs of one example's shape `torch_input`, not an export.
  std::string torch_model;
  std::string torch_input;
};

// kDdpStrategy, the row's strategy name in records, CSV and JSON ("ddp"),
// is report.h's: the reports take PyTorch DDP's compute from that row.

// The DDP row as a listed strategy: "PyTorch DDP", after every registered
// one, modelled as ring (DDP's bucketed ring all-reduce).
ListedStrategy DdpListing();

// Checks that `script` exists and that `python` imports torch with
// torch.distributed (bounded by `timeout`). FAILED_PRECONDITION naming what
// failed (the interpreter, the import, the script) and how to fix it.
absl::StatusOr<DdpPeer> FindDdpPeer(const std::string& python,
                                    const std::string& script,
                                    absl::Duration timeout);

// Writes the data of an n-worker job to `dir`: runs `worker_bin
// --export_batches=dir --rank=0 --world_size=n <worker_args>`.
absl::Status ExportJobData(const std::string& worker_bin, int n,
                           const std::vector<std::string>& worker_args,
                           const std::string& dir, absl::Duration timeout);

// Turns the options of a job into the DDP peer's: the interpreter and the
// script as the worker, strategy "ddp", the rendezvous store (the peer's
// TCPStore), no servers, --data_dir=data_dir (or, for a peer with a
// torch_model, --torch_model and --input) before the other worker flags.
// The peer writes no timeline: `timeline` is cleared.
void UseDdpPeer(const DdpPeer& peer, const std::string& data_dir,
                LocalJobOptions* options);

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_COMPARISON_DDP_ROW_H_

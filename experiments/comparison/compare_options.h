// What a compare invocation was asked to do: its flags' values grouped by
// the part of compare that uses them. compare_main.cc defines the flags and
// fills these once; the modules under experiments/comparison/ read only these
// structs, never a flag. Each field names its flag, whose definition holds
// the default and the full meaning. Plain values: copy them freely.
#ifndef RINGSIDE_EXPERIMENTS_COMPARISON_COMPARE_OPTIONS_H_
#define RINGSIDE_EXPERIMENTS_COMPARISON_COMPARE_OPTIONS_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/grpc_credentials.h"
#include "worker/training_flags.h"

namespace ringside::compare {

// What every worker trains and how long; passed on as worker flags.
struct WorkloadOptions {
  std::string model;               // --model: mlp or synthetic
  std::string profile;             // --profile (synthetic only)
  double emulated_compute_ms = 0;  // --emulated_compute_ms (synthetic only)
  double emulation_scale = 1;      // --emulation_scale S (synthetic only)
  std::string device;              // --device: cpu or cuda
  bool gpu_per_worker = false;     // --gpu_per_worker (cuda)
  int batch_size = 0;              // --batch_size, per worker
  int steps = 0;                   // --steps, per worker
  int warmup_steps = 0;            // --warmup_steps, not measured
  int eval_every = 0;              // --eval_every, steps; 0: no loss curves
  double failure_timeout_s = 0;    // --failure_timeout_s, s; 0: off
  std::string worker_args;         // --worker_args, space-separated
  std::string preset;              // --preset, named in the report
};

// Which runs make the sweep and how each row is timed.
struct SweepOptions {
  std::vector<std::string> workers;  // --workers, unparsed worker counts
  std::string strategies;            // --strategies; "": all registered
  int servers = 0;                   // --servers K for sharded strategies
  int repeats = 0;                   // --repeats, timing runs per row
  int seeds = 1;                     // --seeds, training runs per row
  double min_window_s = 0;           // --min_window_s, s
  int min_window_steps = 0;          // --min_window_steps
  double target_loss = 0;            // --target_loss; 0: chosen from the runs
};

// How each run's local job is started.
struct JobSettings {
  absl::Duration deadline;           // --deadline, per run
  GrpcSecurityFiles security;        // --auth_token_file, --tls_*
  bool generate_auth_token = false;  // --generate_auth_token
  bool relay_stderr = false;         // --verbose
  bool timeline = false;             // --timeline: timeline_*.json per run
};

// The cost model beside the runs.
struct CostModelOptions {
  bool enabled = false;       // --cost_model
  bool calibrate = false;     // --calibrate, after the baseline's run
  double bandwidth_gbit = 0;  // --model_bandwidth_gbit; 0: shaped or measured
  double latency_us = -1;     // --model_latency_us; < 0: shaped or measured
  double overlap = 0;         // --model_overlap, o in [0, 1]
};

// The PyTorch DDP row.
struct DdpOptions {
  bool enabled = false;      // --ddp
  std::string torch_python;  // --torch_python
  std::string peer_script;   // --ddp_peer; "": the runfiles' ddp_peer.py
  // --torch_model (module:factory or file.py:factory) and --torch_input
  // (one example's shape): with --model=synthetic, the DDP row trains this
  // PyTorch model on random inputs beside the profile's emulated rows.
  std::string torch_model;
  std::string torch_input;
};

// The gnuplot plots.
struct PlotSettings {
  bool enabled = false;  // --plots
  std::string gnuplot;   // --gnuplot, name or path
};

// The links the sweep runs on.
struct LinkOptions {
  std::vector<std::string> gbit;        // --link_gbit, unparsed
  std::vector<std::string> latency_us;  // --link_latency_us, unparsed
  std::string tcp_congestion;           // --link_tcp_congestion
  double emulation_scale = 1;           // --emulation_scale: shaped at 1/S
};

struct CompareOptions {
  WorkloadOptions workload;
  SweepOptions sweep;
  JobSettings job;
  CostModelOptions cost_model;
  DdpOptions ddp;
  PlotSettings plots;
  LinkOptions links;
  std::string out_dir;     // --out_dir, as the user typed it
  std::string results_md;  // --results_md; "": none
  // The training-dynamics flags of worker/training_flags.h, checked for
  // `max_workers` workers when the plan needs them (so that their errors
  // come in the plan's order); compare_main.cc passes
  // TrainingFlagsFromFlags.
  std::function<absl::StatusOr<TrainingFlags>(int max_workers)> training_flags;
  // The job binaries (experiments/job/job_binaries.h), or why none was
  // found: an error only where the plan needs the binary.
  absl::StatusOr<std::string> worker_bin;
  absl::StatusOr<std::string> ps_server_bin;
};

}  // namespace ringside::compare

#endif  // RINGSIDE_EXPERIMENTS_COMPARISON_COMPARE_OPTIONS_H_

// RunMetrics: per-step records and the run's measures, with the definitions
// of docs/DESIGN.md: utilization = (forward + backward + local optimizer
// time) / wall time of the measured steps (warm-up steps excluded);
// throughput = global samples per second. Thread-compatible.
#ifndef RINGSIDE_WORKER_RUN_METRICS_H_
#define RINGSIDE_WORKER_RUN_METRICS_H_

#include <cstdint>
#include <nlohmann/json.hpp>

namespace ringside {

struct StepRecord {
  int64_t step = 0;
  double loss = 0;
  double compute_s = 0;  // forward + backward + local optimizer
  // Its CPU time (the training thread's CPU clock, not the time it waited
  // for a core); −1: unknown (a device, emulated compute, several compute
  // threads). Not in the step's JSON.
  double compute_cpu_s = -1;
  double sync_s = 0;     // the rest of the step (communication, waiting)
  double step_s = 0;     // wall time of the whole step
  int64_t bytes_sent = 0;
  int64_t bytes_received = 0;
  int64_t ring_critical_bytes = 0;  // StepStats'; not in the step's JSON

  nlohmann::json ToJson() const;  // {"event":"step",...}
};

class RunMetrics {
 public:
  // `global_batch` = world_size * per-worker batch; steps < warmup_steps are
  // not measured.
  RunMetrics(int64_t global_batch, int64_t warmup_steps)
      : global_batch_(global_batch), warmup_steps_(warmup_steps) {}

  // `start_s` is the step's start on the steady clock.
  void Add(const StepRecord& record, double start_s);
  // `seconds` between two steps that were not training (a mid-run
  // evaluation): left out of wall_s when a measured step follows.
  void Pause(double seconds) { pending_pause_s_ += seconds; }

  int64_t measured_steps() const { return measured_steps_; }
  double compute_s() const { return compute_s_; }
  // The measured steps' compute CPU time; −1 when any step's was unknown
  // (or no step was measured).
  double compute_cpu_s() const {
    return measured_steps_ > 0 ? compute_cpu_s_ : -1;
  }
  double wall_s() const { return last_end_s_ - first_start_s_ - paused_s_; }
  double utilization() const;
  double throughput() const;  // global samples / s
  int64_t bytes_sent() const { return bytes_sent_; }
  int64_t bytes_received() const { return bytes_received_; }
  int64_t ring_critical_bytes() const { return ring_critical_bytes_; }

 private:
  int64_t global_batch_;
  int64_t warmup_steps_;
  int64_t measured_steps_ = 0;
  double compute_s_ = 0, first_start_s_ = 0, last_end_s_ = 0;
  double compute_cpu_s_ = 0;  // −1: a measured step's was unknown
  double paused_s_ = 0, pending_pause_s_ = 0;
  int64_t bytes_sent_ = 0, bytes_received_ = 0, ring_critical_bytes_ = 0;
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_RUN_METRICS_H_

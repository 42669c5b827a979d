#include "worker/run_metrics.h"

namespace ringside {

nlohmann::json StepRecord::ToJson() const {
  return {{"event", "step"},
          {"step", step},
          {"loss", loss},
          {"compute_s", compute_s},
          {"sync_s", sync_s},
          {"step_s", step_s},
          {"bytes_sent", bytes_sent},
          {"bytes_received", bytes_received}};
}

void RunMetrics::Add(const StepRecord& record, double start_s) {
  if (record.step < warmup_steps_) {
    pending_pause_s_ = 0;
    return;
  }
  if (measured_steps_ == 0) first_start_s_ = start_s;
  if (measured_steps_ > 0) paused_s_ += pending_pause_s_;
  pending_pause_s_ = 0;
  last_end_s_ = start_s + record.step_s;
  ++measured_steps_;
  compute_s_ += record.compute_s;
  // −1 stays once any measured step's is unknown.
  compute_cpu_s_ = compute_cpu_s_ < 0 || record.compute_cpu_s < 0
                       ? -1
                       : compute_cpu_s_ + record.compute_cpu_s;
  bytes_sent_ += record.bytes_sent;
  bytes_received_ += record.bytes_received;
  ring_critical_bytes_ += record.ring_critical_bytes;
}

double RunMetrics::utilization() const {
  return wall_s() > 0 ? compute_s_ / wall_s() : 0.0;
}

double RunMetrics::throughput() const {
  return wall_s() > 0 ? measured_steps_ * global_batch_ / wall_s() : 0.0;
}

}  // namespace ringside

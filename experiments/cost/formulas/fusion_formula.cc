// fusion: Horovod's runtime. Its background thread cycles every τ
// (--cycle_time_ms), at every n; at n > 1 each step is b fused all-reduces,
// b = min(T, ⌈M/F⌉) (F: --fusion_threshold_bytes; b = T when F = 0, fusion
// off), plus one control all-reduce (the response cache's bit vector).
//   comm      n = 1: τ (at n = 1 on the 2-core VM the MLP's step took
//             1.0–1.1 ms more than its compute, τ = 1 ms); else
//               2(n−1)/n · M/B + b · 2(n−1)α + τ + 2(n−1)α
//             τ being one cycle of waiting for the background thread
//   CPU       n > 1: 2(n−1)/n · M · a_b + (b + 1) · 2(n−1) · c_s + l_w
//   memory    worker (2 + s)·P: parameters, gradients, optimizer state
//   W         2(n−1)M bytes sent by all the ranks
//   backward  cycles: the runtime wakes one τ after the first gradient,
//             then each cycle (at most every τ) all-reduces every gradient
//             ready by its start, in calls of at most F bytes (one per
//             tensor with F = 0), plus one control all-reduce; all of O,
//             and τ is not added again
//   updates   exact
#include <algorithm>
#include <cmath>

#include "experiments/cost/formulas/formula_registry.h"
#include "experiments/cost/formulas/formula_support.h"

namespace ringside {
namespace {

// b = min(T, ⌈M/F⌉); T when fusion is off (F = 0).
int64_t FusedAllReduces(const CostInputs& in) {
  if (in.fusion_threshold_bytes <= 0) return in.num_tensors;
  const double batches = std::ceil(in.model_bytes / in.fusion_threshold_bytes);
  return std::min<int64_t>(in.num_tensors,
                           std::max<int64_t>(1, static_cast<int64_t>(batches)));
}

// fusion's runtime over the schedule: idle until a gradient arrives, it
// runs a cycle one τ later, then every τ (or once the last cycle ended)
// while work is left; each cycle all-reduces every gradient ready by its
// start in calls of at most F bytes (one per tensor with F = 0) after one
// control all-reduce, each call per_call_s + per_byte_s · bytes.
SerialRun RunFusionCycles(const std::vector<GradientReady>& ready,
                          double cycle_s, double threshold_bytes,
                          double per_call_s, double per_byte_s) {
  SerialRun run;
  size_t next = 0;
  double tick = ready.empty() ? 0 : ready.front().ready_s + cycle_s;
  while (next < ready.size()) {
    const double start = std::max(tick, run.end_s);
    double bytes = 0, tensors = 0;
    while (next < ready.size() && ready[next].ready_s <= start) {
      bytes += ready[next++].bytes;
      ++tensors;
    }
    if (tensors == 0) {  // idle again: woken by the next gradient
      tick = ready[next].ready_s + cycle_s;
      continue;
    }
    const double calls =
        1 + (threshold_bytes > 0 ? std::ceil(bytes / threshold_bytes)
                                 : tensors);
    const double d = calls * per_call_s + per_byte_s * bytes;
    run.end_s = start + d;
    run.busy_s += d;
    tick = start + cycle_s;
  }
  return run;
}

class FusionFormula : public ReplicatedFormula {
 public:
  std::string name() const override { return "fusion"; }
  std::vector<std::string> options() const override {
    return {"cycle_time_ms", "fusion_threshold_bytes"};
  }
  void Terms(const CostInputs& in, Prediction& p) const override {
    // The background thread cycles at every n: the step waits for a cycle.
    p.overhead_s = in.cycle_s;
    if (in.workers <= 1) return;
    const double n = static_cast<double>(in.workers);
    const double M = in.model_bytes;
    const CpuCosts& c = in.cpu;
    const double share = (n - 1.0) / n;  // of M a rank sends per phase
    const double all_reduce = 2 * (n - 1);  // ring steps, c_s each
    p.bandwidth_s = RingBandwidthSeconds(in);
    // b data all-reduces plus the control all-reduce of the cycle.
    p.latency_s =
        static_cast<double>(FusedAllReduces(in) + 1) * RingLatencySeconds(in);
    p.streamed_cpu_s =
        2 * share * M * c.allreduce_byte_s +
        static_cast<double>(FusedAllReduces(in) + 1) * all_reduce *
            c.collective_step_s;
    p.cpu_s = p.streamed_cpu_s + c.collective_wake_s;
  }
  double BytesSentPerStep(const CostInputs& in) const override {
    if (in.workers <= 1) return 0;
    const double n = static_cast<double>(in.workers);
    return 2 * (n - 1) * in.model_bytes;
  }
  bool SimulateBackward(const CostInputs& in, const Prediction& p,
                        const BackwardBudget& budget,
                        BackwardRun& run) const override {
    // b data all-reduces and the control one (at n = 1 all cost 0); τ is
    // in the cycles, not added again.
    const double n = static_cast<double>(in.workers);
    const double formula_calls = static_cast<double>(FusedAllReduces(in) + 1);
    const double per_call =
        p.latency_s / formula_calls + 2 * (n - 1) * StreamedStepSeconds(in);
    const double per_byte =
        std::max(0.0, budget.overlappable_s - formula_calls * per_call) /
        budget.total_bytes;
    const SerialRun r =
        RunFusionCycles(in.gradient_ready, in.cycle_s,
                        in.fusion_threshold_bytes, per_call, per_byte);
    run.end_s = r.end_s;
    run.busy_s = r.busy_s;
    return true;
  }
};

}  // namespace

RINGSIDE_REGISTER_FORMULA(FusionFormula, 4);

}  // namespace ringside

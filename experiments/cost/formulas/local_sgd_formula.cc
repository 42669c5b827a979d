// local_sgd and diloco: no communication on H − 1 of every H steps, then
// one all-reduce of the parameters (H = --local_steps; one call, not in
// buckets, after the optimizer: nothing overlaps backward). Per step, on
// average over a round:
//   comm      n = 1: 0; else (2(n−1)/n · M/B + 2(n−1)α) / H
//   CPU       n > 1: (2(n−1)/n · M · a_b + 2(n−1) · c_s + l_w) / H
//   memory    local_sgd worker (3 + s)·P: parameters, gradients, optimizer
//             state and the last average (what evaluations read);
//             diloco (4 + s)·P, the outer momentum besides
//   W         2(n−1)M/H bytes sent by all the ranks
//   backward  none: the average follows the step's optimizer
//   updates   local: each worker's own gradients for H steps (its samples
//             buy less loss than a synchronous step's; rankings keep it
//             apart from the exact strategies)
// The warm-up's exact steps (--local_sgd_warmup_steps: one all-reduce of
// the gradients after backward each) are this formula's at H = 1
// (plain_first_steps); after them a window runs rounds only. The average
// is timed as part of the step it follows, so a window of whole rounds
// has the formula's mean step.
#include "experiments/cost/formulas/formula_registry.h"
#include "experiments/cost/formulas/formula_support.h"

namespace ringside {
namespace {

class LocalSgdFormula : public StrategyFormula {
 public:
  std::string name() const override { return "local_sgd"; }
  std::vector<std::string> options() const override {
    return {"local_steps", "local_sgd_warmup_steps"};
  }
  std::optional<PlainFirstSteps> plain_first_steps() const override {
    return PlainFirstSteps{
        "local_sgd_warmup_steps", "local_sgd", {{"local_steps", "1"}}};
  }
  void Terms(const CostInputs& in, Prediction& p) const override {
    if (in.workers <= 1) return;
    const double H = RoundSteps(in);
    const double n = static_cast<double>(in.workers);
    const double M = in.model_bytes;
    const CpuCosts& c = in.cpu;
    const double share = (n - 1.0) / n;
    p.bandwidth_s = RingBandwidthSeconds(in) / H;
    p.latency_s = RingLatencySeconds(in) / H;
    p.streamed_cpu_s =
        (2 * share * M * c.allreduce_byte_s + 2 * (n - 1) * c.collective_step_s) /
        H;
    p.cpu_s = p.streamed_cpu_s + c.collective_wake_s / H;
  }
  double BytesSentPerStep(const CostInputs& in) const override {
    if (in.workers <= 1) return 0;
    const double n = static_cast<double>(in.workers);
    return 2 * (n - 1) * in.model_bytes / RoundSteps(in);
  }
  Updates UpdatesAt(int64_t staleness) const override {
    return Updates::kLocal;
  }
  std::string MemoryFormula() const override { return "(3 + s)·P"; }
  MemoryPerRank Memory(double P, double s, int64_t n,
                       int64_t k) const override {
    return WorkerCopiesMemory(3, P, s);
  }

 protected:
  // H, the run's --local_steps (the strategy's default 8 where absent).
  static double RoundSteps(const CostInputs& in) {
    const double h = OptionNumber(in, "local_steps", 8);
    return h >= 1 ? h : 1;
  }
};

class DiLoCoFormula final : public LocalSgdFormula {
 public:
  std::string name() const override { return "diloco"; }
  std::string MemoryFormula() const override { return "(4 + s)·P"; }
  MemoryPerRank Memory(double P, double s, int64_t n,
                       int64_t k) const override {
    return WorkerCopiesMemory(4, P, s);
  }
};

}  // namespace

RINGSIDE_REGISTER_FORMULA(LocalSgdFormula, 13);
RINGSIDE_REGISTER_FORMULA(DiLoCoFormula, 14);

}  // namespace ringside

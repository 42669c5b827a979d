// ring_powersgd: ring's buckets (DDP's, b_r of them) with PowerSGD's
// low-rank compression (worker/strategies/allreduce/powersgd_hook.h), per
// bucket a float32 all-reduce of its plain tensors and every P, then one of
// every Q (none where the bucket compresses nothing). A tensor of shape
// (rows, rest...) is a rows × cols matrix, cols = its elements / rows,
// compressed at rank r_m = min(r, rows, cols) when it has 2+ dimensions and
// rows·cols >= ρ_c · r_m·(rows + cols) (r = --powersgd_rank: default 2,
// a study's 4, its study_flags;
// ρ_c = --powersgd_min_compression_rate, default 2), else sent whole. Per
// step, over the model's tensors (CostInputs::tensor_shapes; not known:
// T square matrices of M/(4T) elements each): E_w = the plain elements +
// Σ rows·r_m + Σ cols·r_m, the floats a rank all-reduces; c_a = the
// all-reduces, b_r + (buckets that compress a matrix).
//   comm      n = 1: the compression only; else 2(n−1)/n · 4E_w/B +
//             c_a · 2(n−1)α
//   CPU       at every n (the hook compresses at n = 1 too):
//             Σ 3·rows·cols·r_m · p_m (M·Q, Mᵀ·P, P·Qᵀ) + E_b · p_e (the
//             error-feedback passes over the buckets that compress, E_b
//             their elements); n > 1 besides: 2(n−1)/n · 4E_w · a_b +
//             c_a · 2(n−1) · c_s + l_w. The orthonormalization (rows·r_m²
//             a matrix) is not priced.
//   memory    worker (3 + s)·P: parameters, gradients, optimizer state and
//             the error-feedback memory (P and Q, r_m·(rows + cols) a
//             matrix, not counted)
//   W         2(n−1) · 4E_w bytes sent by all the ranks
//   backward  ring's buckets, all of O
//   updates   lossy below full rank
// The first --powersgd_start_step steps are plain all-reduces of ring's
// buckets, priced by ring's formula (plain_first_steps); these terms are
// the compressed steps'.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "experiments/cost/formulas/formula_registry.h"
#include "experiments/cost/formulas/formula_support.h"

namespace ringside {
namespace {

// A step's elements, as the hook moves and computes them.
struct LowRankStep {
  double wire_elements = 0;     // E_w
  double allreduces = 0;        // c_a
  double multiply_adds = 0;     // Σ 3·rows·cols·r_m
  double feedback_elements = 0; // E_b
};

// The tensors as (rows, cols, dimensions) in the layout's order.
struct Matrix {
  double rows = 1, cols = 1;
  bool two_dimensional = false;
};

std::vector<Matrix> Matrices(const CostInputs& in) {
  std::vector<Matrix> out;
  if (in.tensor_shapes.empty()) {
    const double side = std::sqrt(in.model_bytes / 4 /
                                  static_cast<double>(in.num_tensors));
    out.assign(static_cast<size_t>(in.num_tensors), {side, side, true});
    return out;
  }
  for (const std::vector<int64_t>& shape : in.tensor_shapes) {
    Matrix m;
    double elements = 1;
    for (int64_t d : shape) elements *= static_cast<double>(d);
    m.rows = shape.empty() ? 1 : static_cast<double>(shape[0]);
    m.cols = elements / m.rows;
    m.two_dimensional = shape.size() >= 2;
    out.push_back(m);
  }
  return out;
}

LowRankStep StepOf(const CostInputs& in) {
  const double rank = std::max(1.0, OptionNumber(in, "powersgd_rank", 2));
  const double rate =
      std::max(0.0, OptionNumber(in, "powersgd_min_compression_rate", 2));
  const std::vector<Matrix> matrices = Matrices(in);
  LowRankStep step;
  // DDP's buckets in backward's order (the layout's last tensor first).
  double open_elements = 0, open_q = 0;
  bool first = true;
  auto close = [&] {
    step.allreduces += 1 + (open_q > 0 ? 1 : 0);
    if (open_q > 0) step.feedback_elements += open_elements;
    open_elements = open_q = 0;
    first = false;
  };
  for (auto m = matrices.rbegin(); m != matrices.rend(); ++m) {
    const double elements = m->rows * m->cols;
    const double r = std::min({rank, m->rows, std::max(m->cols, 1.0)});
    if (m->two_dimensional &&
        elements >= rate * r * (m->rows + m->cols)) {
      step.wire_elements += r * (m->rows + m->cols);
      step.multiply_adds += 3 * elements * r;
      open_q += r * m->cols;
    } else {
      step.wire_elements += elements;
    }
    open_elements += elements;
    if (BucketCloses(in, first, 4 * open_elements)) close();
  }
  if (open_elements > 0) close();
  return step;
}

class RingPowerSgdFormula final : public StrategyFormula {
 public:
  std::string name() const override { return "ring_powersgd"; }
  std::vector<std::string> options() const override {
    return {"ring_bucket_kb", "ring_first_bucket_kb", "powersgd_rank",
            "powersgd_min_compression_rate", "powersgd_start_step"};
  }
  std::optional<PlainFirstSteps> plain_first_steps() const override {
    return PlainFirstSteps{"powersgd_start_step", "ring", {}};
  }
  std::vector<std::string> study_flags() const override {
    return {"--powersgd_rank=4", "--powersgd_start_step=8"};
  }
  std::string LossyNote() const override { return "PowerSGD, low rank"; }
  Updates UpdatesAt(int64_t) const override { return Updates::kLossy; }

  void Terms(const CostInputs& in, Prediction& p) const override {
    const LowRankStep step = StepOf(in);
    const CpuCosts& c = in.cpu;
    const double compression =
        step.multiply_adds * c.lowrank_multiply_add_s +
        step.feedback_elements * c.error_feedback_element_s;
    p.cpu_s = compression;
    if (in.workers <= 1) return;
    const double n = static_cast<double>(in.workers);
    const double wire_bytes = 4 * step.wire_elements;
    const double share = 2 * (n - 1) / n;
    p.bandwidth_s = share * wire_bytes / in.bandwidth_Bps;
    p.latency_s = step.allreduces * 2 * (n - 1) * in.latency_s;
    p.streamed_cpu_s = share * wire_bytes * c.allreduce_byte_s +
                       step.allreduces * 2 * (n - 1) * c.collective_step_s;
    p.cpu_s += p.streamed_cpu_s + c.collective_wake_s;
  }
  double BytesSentPerStep(const CostInputs& in) const override {
    if (in.workers <= 1) return 0;
    const double n = static_cast<double>(in.workers);
    return 2 * (n - 1) * 4 * StepOf(in).wire_elements;
  }
  bool SimulateBackward(const CostInputs& in, const Prediction& p,
                        const BackwardBudget& budget,
                        BackwardRun& run) const override {
    if (in.workers <= 1) return false;  // nothing to communicate
    const double n = static_cast<double>(in.workers);
    // Per bucket its two all-reduces' ring steps, on average.
    const double per_bucket = StepOf(in).allreduces /
                              static_cast<double>(RingAllReduces(in));
    RunBucketAllReduces(in, p, budget, per_bucket * 2 * (n - 1), run);
    return true;
  }
  std::string MemoryFormula() const override { return "(3 + s)·P"; }
  MemoryPerRank Memory(double P, double s, int64_t n,
                       int64_t k) const override {
    return WorkerCopiesMemory(3, P, s);
  }
};

}  // namespace

RINGSIDE_REGISTER_FORMULA(RingPowerSgdFormula, 11);

}  // namespace ringside

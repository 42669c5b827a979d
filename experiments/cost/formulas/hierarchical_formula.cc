// hierarchical: with r ranks per host (ranks_per_host, --local_size; 0:
// all n on one host) and h = ⌈n/r⌉ hosts, per bucket (ring's buckets and
// b_r, ring_formula.cc) Horovod's hierarchical all-reduce: a reduce-scatter
// within the host (the intra-host link B_i, α_i), an all-reduce of each
// rank's 1/r shard among its h peers across hosts (B, α; the host's r
// shards share its link) and an all-gather within the host.
//   comm      n = 1: 0; else 2(r−1)/r · M/B_i + 2(h−1)/h · M/B
//                              + b_r · [2(r−1)α_i + 2(h−1)α]
//   CPU       n > 1: (r−1)/r · M · (r_b + g_b) + 2(h−1)/h · (M/r) · a_b
//                    + b_r · (2(r−1) + 2(h−1)) · c_s + l_w
//   memory    worker (2 + s)·P: parameters, gradients, optimizer state
//   W         2(n−1)M bytes sent by all the ranks
//   backward  ring's buckets, all of O, each call 2(r−1) + 2(h−1) ring
//             steps
//   updates   exact
#include <algorithm>
#include <cmath>

#include "experiments/cost/formulas/formula_registry.h"
#include "experiments/cost/formulas/formula_support.h"

namespace ringside {
namespace {

// r: CostInputs::ranks_per_host, at most n; 0 means n.
int64_t RanksPerHost(const CostInputs& in) {
  if (in.ranks_per_host <= 0) return in.workers;
  return std::min(in.ranks_per_host, in.workers);
}

class HierarchicalFormula : public ReplicatedFormula {
 public:
  std::string name() const override { return "hierarchical"; }
  std::vector<std::string> options() const override {
    return {"local_size", "ring_bucket_kb", "ring_first_bucket_kb"};
  }
  void Terms(const CostInputs& in, Prediction& p) const override {
    if (in.workers <= 1) return;
    const double n = static_cast<double>(in.workers);
    const double M = in.model_bytes;
    const double B = in.bandwidth_Bps;
    const CpuCosts& c = in.cpu;
    const double buckets = static_cast<double>(RingAllReduces(in));
    const double r = static_cast<double>(RanksPerHost(in));
    const double h = std::ceil(n / r);  // hosts
    const double b_intra = IntraBandwidthBps(in);
    const double a_intra = IntraLatencySeconds(in);
    // Per bucket (ring's), Horovod's hierarchical all-reduce: a
    // reduce-scatter within the host, an all-reduce of each rank's 1/r
    // shard among its h peers across hosts (the r shards of a host share
    // its link: 2(h−1)/h · M through it), an all-gather within the host.
    p.bandwidth_s =
        2.0 * (r - 1.0) / r * M / b_intra + 2.0 * (h - 1.0) / h * M / B;
    p.latency_s = buckets * (2.0 * (r - 1.0) * a_intra +
                             2.0 * (h - 1.0) * in.latency_s);
    p.streamed_cpu_s =
        (r - 1) / r * M * (c.reduce_scatter_byte_s + c.allgather_byte_s) +
        2 * (h - 1) / h * (M / r) * c.allreduce_byte_s +
        buckets * (2 * (r - 1) + 2 * (h - 1)) * c.collective_step_s;
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
    if (in.workers <= 1) return false;  // nothing to communicate
    const double n = static_cast<double>(in.workers);
    const double r = static_cast<double>(RanksPerHost(in));
    RunBucketAllReduces(in, p, budget,
                        2 * (r - 1) + 2 * (std::ceil(n / r) - 1), run);
    return true;
  }
};

}  // namespace

RINGSIDE_REGISTER_FORMULA(HierarchicalFormula, 6);

}  // namespace ringside

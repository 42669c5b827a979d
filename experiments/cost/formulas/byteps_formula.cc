// byteps: BytePS's design. With r ranks per host (ranks_per_host,
// --local_size; 0: all n on one host), h = ⌈n/r⌉ hosts, K summation
// servers, s on each worker host (servers_per_host) and X on hosts of their
// own (server_hosts), K = s·h + X (both 0: K = servers, X = K, compare's
// layout), each server holding M/K:
//   within the host (B_i, α_i; r > 1): ring's buckets reduced to the root,
//   a chain, M/B_i, and the sums broadcast back, M/B_i;
//   across (B, α): the root pushes M and pulls M, one copy per host; a
//   worker host's link also carries its s servers' share of the other
//   hosts' pushes and pulls, (h−1)·s·M/K each way, and a server host's
//   h·M/K each way. With d = 1 (push and pull share the seconds of a
//   full-duplex link) the busiest direction of the busiest link,
//   max(M(1 − s/K) + (h−1)·s·M/K, [X > 0] h·M/K) / B; with d = 2 the push
//   phase then the pull phase, 2·max(M(1 − s/K), (h−1)·s·M/K,
//   [X > 0] h·M/K) / B. Colocated servers alone (X = 0, s·h = K) give
//   2(h−1)/h · M/B, ring's among the hosts; servers of their own alone
//   (s = 0) d·max(M, h·M/K)/B, dps's among the h roots: K ≥ h such hosts
//   halve ring's bytes through a worker host's link (BytePS's point).
//   comm      2·M/B_i [r > 1] + the crossing above (one worker's too)
//                          + b_r·(r−1)·α_i + ⌈log2 r⌉·α_i + 2α
//                          + the push/pull pipeline 2·h·C/B (d = 1)
//   CPU       the roots' parameter-server CPU against K servers, as dps's
//             with n → h (the servers' per-byte cost measured with an
//             optimizer step; a summation server's is less), and within
//             the host M·(r_b + g_b) + b_r·(r−1)·c_s
//   memory    worker (3 + s_o)·P: parameters, gradients, optimizer state
//             and the root's pulled sums; each server 2P/K (sums, one
//             accumulator)
//   W         2nM bytes sent: 2hM pushed and pulled, 2h(r−1)M within hosts
//   backward  the local reduces and pushes stream as the buckets close
//             ((O − latency − the broadcast)/d in backward, the pulls with
//             d = 2 and the broadcast after)
//   updates   exact
#include <algorithm>
#include <cmath>

#include "experiments/cost/formulas/formula_registry.h"
#include "experiments/cost/formulas/formula_support.h"

namespace ringside {
namespace {

struct Layout {
  double r = 1, h = 1;  // ranks per host, hosts
  double s = 0, x = 0;  // servers on each worker host, on hosts of their own
  double k = 1;
};

Layout LayoutOf(const CostInputs& in) {
  Layout l;
  const double n = static_cast<double>(in.workers);
  l.r = in.ranks_per_host <= 0
            ? n
            : static_cast<double>(std::min(in.ranks_per_host, in.workers));
  l.h = std::ceil(n / l.r);
  if (in.servers_per_host == 0 && in.server_hosts == 0) {
    l.k = l.x = static_cast<double>(std::max<int64_t>(in.servers, 1));
    return l;
  }
  l.s = static_cast<double>(in.servers_per_host);
  l.x = static_cast<double>(in.server_hosts);
  l.k = l.s * l.h + l.x;
  return l;
}

// The seconds of the crossing: the busiest link's busiest direction.
double CrossingSeconds(const CostInputs& in, const Layout& l) {
  const double M = in.model_bytes;
  const double out_of_host = M * (1 - l.s / l.k);
  const double for_its_servers = (l.h - 1) * l.s * M / l.k;
  const double server_host = l.x > 1e-9 ? l.h * M / l.k : 0.0;
  const double busiest =
      DuplexFactor(in) == 1
          ? std::max(out_of_host + for_its_servers, server_host)
          : 2 * std::max({out_of_host, for_its_servers, server_host});
  return busiest / in.bandwidth_Bps;
}

// The within-host broadcast's latency: its tree's ⌈log2 r⌉ hops.
double BroadcastLatencySeconds(const CostInputs& in, const Layout& l) {
  return l.r > 1 ? std::ceil(std::log2(l.r)) * IntraLatencySeconds(in) : 0;
}

// The within-host broadcast of the sums (after the pulls): M/B_i and its
// latency.
double BroadcastSeconds(const CostInputs& in, const Layout& l) {
  if (l.r <= 1) return 0;
  return in.model_bytes / IntraBandwidthBps(in) +
         BroadcastLatencySeconds(in, l);
}

// The inputs as the roots see them: h pushing ranks against K servers.
CostInputs RootsInputs(const CostInputs& in, const Layout& l) {
  CostInputs roots = in;
  roots.workers = static_cast<int64_t>(l.h);
  roots.servers = static_cast<int64_t>(l.k);
  return roots;
}

class BytepsFormula : public StrategyFormula {
 public:
  std::string name() const override { return "byteps"; }
  std::vector<std::string> options() const override {
    return {"local_size", "chunk_kb", "ps_transport", "ring_bucket_kb",
            "ring_first_bucket_kb"};
  }
  void Terms(const CostInputs& in, Prediction& p) const override {
    // One worker still pushes to and pulls from the servers, as dps's.
    const Layout l = LayoutOf(in);
    // The roots' CPU and pipeline, against K.
    ShardedPsTerms(RootsInputs(in, l), p);
    p.workers = in.workers;
    const double M = in.model_bytes;
    const double buckets = static_cast<double>(RingAllReduces(in));
    p.bandwidth_s = CrossingSeconds(in, l) +
                    (l.r > 1 ? 2 * M / IntraBandwidthBps(in) : 0);
    p.latency_s = buckets * (l.r - 1) * IntraLatencySeconds(in) +
                  BroadcastLatencySeconds(in, l) + 2 * in.latency_s;
    if (l.r > 1) {
      const CpuCosts& c = in.cpu;
      const double local =
          M * (c.reduce_scatter_byte_s + c.allgather_byte_s) +
          buckets * (l.r - 1) * c.collective_step_s;
      p.streamed_cpu_s += local;
      p.cpu_s += local;
    }
  }
  double BytesSentPerStep(const CostInputs& in) const override {
    return 2 * static_cast<double>(in.workers) * in.model_bytes;
  }
  double CommCpuDemandSeconds(const CostInputs& in,
                              const Prediction& p) const override {
    return PsCpuDemandSeconds(RootsInputs(in, LayoutOf(in)));
  }
  bool SimulateBackward(const CostInputs& in, const Prediction& p,
                        const BackwardBudget& budget,
                        BackwardRun& run) const override {
    if (in.workers <= 1) return false;  // nothing to communicate
    RunStreamedPushes(in, p, budget, BucketCalls(in),
                      BroadcastSeconds(in, LayoutOf(in)), run);
    return true;
  }
  std::string MemoryFormula() const override {
    return "(3 + s)·P; server 2P/K";
  }
  MemoryPerRank Memory(double P, double s, int64_t n,
                       int64_t k) const override {
    MemoryPerRank m = WorkerCopiesMemory(3, P, s);
    m.server_bytes = 2 * P / static_cast<double>(k);
    return m;
  }
};

}  // namespace

RINGSIDE_REGISTER_FORMULA(BytepsFormula, 18);

}  // namespace ringside

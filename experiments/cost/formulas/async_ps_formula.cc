// async_ps: dps's servers and traffic (dps_formula.cc) with a staleness
// bound τ_s (--staleness). With τ_s ≥ 1 the push+pull of step t runs on a
// background thread while the worker computes the next steps, so all of it
// overlaps compute (o = 1): the step is the slower of the two,
// max(t_c + u, comm); τ_s = 0 waits every round trip, as dps.
//   comm      d · max(M/B, n·M/(K·B)) + 2α + 2·n·C/B, as dps
//   CPU       as dps. With τ_s ≥ 1 the cores beyond the n training threads
//             run the rounds' CPU work, shared among the threads that want
//             it then, the n rounds' and the K servers', so the hidden
//             share is
//               h = clamp((C − n) / (n + K), 0, 1)   (C = 0, no limit: 1)
//             and u = (1 − h)·cpu. On 2 cores h = 0 at n >= 2 and 0.2 at
//             n = 1 with K = 4; on 16 cores h = 1 up to n = 6.
//   memory    as dps: worker 2P; each server (2 + s)·P/K
//   W         2nM bytes sent (n pushes, n pulls)
//   backward  nothing starts in backward (with τ_s ≥ 1 the rounds run in
//             the background instead)
//   updates   exact at τ_s = 0; stale at τ_s ≥ 1 (gradients applied up to
//             τ_s steps late)
//
// Its own cores' bound, with τ_s ≥ 1: no step is shorter than the CPU work
// of all its processes over the C cores of the machine they share (where C
// and the rounds' CPU against its K servers were calibrated, q_1 and q_w
// per model byte, measured beside compute stand-ins whatever the run's
// compute, since the bound binds only on saturated cores, calibration.h;
// C = 0, no core limit, as predict sets for a cluster: none):
//   step >= [n·(t_c + 2·M·x) + M·(q_1 + (n − 1)·q_w) + 2·n·M·y] / C
// (t_c as below; for emulated compute, which sleeps, its CPU time t_c'
// where measured, else 0: the synthetic model still writes its gradients,
// 7-14 ms of CPU a step for mobilenet_v2's 3.5 M parameters)
// (x a byte's copy: each step its training thread copies its gradient out
// and the newest parameters in)
// (y the CPU a byte moved costs on the run's link beyond loopback's, where
// the rounds were calibrated (CostInputs::link_cpu_byte_s: a shaped link's
// veths, bridge and htb, measured by its probe, job/link_probe.h; 0 on
// loopback); each step moves 2·n·M bytes, n pushes and n pulls of M. At
// 1 Gbit/s, n = 4 (mobilenet_v2, emulated compute, 8 processes) the
// machine was 90.5% busy, 345 ms of CPU a step, where q and x accounted
// for 192.) The formula above packs the rounds' CPU perfectly beside the
// compute's; on saturated cores they run slower than
// their quiet calibration (u): on 2 cores at n = 2 (loopback, the MLP,
// 4 servers) a quiet 2-worker round took 34-39 ms of CPU, 45-47 ms beside
// two stand-ins, and async_ps's processes used 70 ms of CPU a step.
// There t_c is min(t_c, t_c') where the run measured the compute's CPU
// time t_c' (CostInputs::compute_cpu_s) and the compute is not emulated:
// on busy cores the compute's wall time holds the rounds' CPU work that ran
// on its cores, which u counts. Measured on 2 cores (loopback, n = 2, the
// MLP): async_ps's compute took 19.7–21.1 ms of wall time a step and
// 6.4–6.7 ms of CPU.
#include <algorithm>

#include "experiments/cost/formulas/formula_registry.h"
#include "experiments/cost/formulas/formula_support.h"

namespace ringside {
namespace {

// h: the share of a background thread's CPU work that the cores beyond the
// n training threads run, shared among the n rounds' threads and the K
// servers.
double SpareCoreShare(const CostInputs& in) {
  if (in.cpu.cores == 0) return 1.0;
  const double spare = static_cast<double>(in.cpu.cores - in.workers);
  return std::clamp(spare / static_cast<double>(in.workers + in.servers), 0.0,
                    1.0);
}

// The cores' bound (the file comment): the n training threads' compute and
// their two M-byte copies, the n workers' rounds with their K servers' work
// and the link's CPU beyond loopback's, over the C cores; 0 when there is
// no core limit (C = 0) or the rounds' CPU against this K is not known.
double AsyncCoreBoundSeconds(const CostInputs& in, double compute_s) {
  const CpuCosts& c = in.cpu;
  if (c.cores == 0 || c.ps_round_cpu_servers != in.servers ||
      c.ps_round_cpu_byte_s <= 0) {
    return 0;
  }
  const double n = static_cast<double>(in.workers);
  const double M = in.model_bytes;
  // Emulated compute sleeps, taking no core but for the gradients it
  // writes: its CPU time t_c' where measured, else none.
  const double compute_cpu =
      in.compute_emulated ? in.compute_cpu_s : compute_s;
  const double training = n * (compute_cpu + 2 * M * c.copy_byte_s);
  const double rounds =
      M * (c.ps_round_cpu_byte_s + (n - 1) * c.ps_round_cpu_worker_byte_s);
  // The link's own CPU beyond loopback's: n pushes and n pulls of M.
  const double link = 2 * n * M * in.link_cpu_byte_s;
  return (training + rounds + link) / static_cast<double>(c.cores);
}

class AsyncPsFormula : public StrategyFormula {
 public:
  std::string name() const override { return "async_ps"; }
  std::vector<std::string> options() const override {
    return {"chunk_kb", "staleness", "ps_transport"};
  }
  std::vector<std::string> study_flags() const override {
    return {"--staleness=2"};
  }
  void Terms(const CostInputs& in, Prediction& p) const override {
    // async_ps moves what dps moves; with a staleness bound it moves it
    // behind the compute (RunsInBackground).
    ShardedPsTerms(in, p);
  }
  double BytesSentPerStep(const CostInputs& in) const override {
    return 2 * static_cast<double>(in.workers) * in.model_bytes;
  }
  double CommCpuDemandSeconds(const CostInputs& in,
                              const Prediction& p) const override {
    return PsCpuDemandSeconds(in);
  }
  bool RunsInBackground(const CostInputs& in, Prediction& p) const override {
    if (in.staleness <= 0) return false;
    // The CPU terms share the cores with the compute, except the share the
    // cores beyond the training threads run.
    p.hidden_cpu_s = SpareCoreShare(in) * p.cpu_s;
    // A background round's CPU work that took the compute's cores is in
    // the compute's wall time and in u: the step counts the compute's own
    // CPU time where it was measured. Emulated compute sleeps through t_c
    // whatever its CPU time.
    p.step_compute_s = in.compute_cpu_s > 0 && !in.compute_emulated
                           ? std::min(in.compute_s, in.compute_cpu_s)
                           : in.compute_s;
    // On saturated cores a background round runs as fast as the cores let
    // it, not as fast as its quiet calibration.
    p.core_bound_s = AsyncCoreBoundSeconds(in, p.step_compute_s);
    return true;
  }
  Updates UpdatesAt(int64_t staleness) const override {
    return staleness > 0 ? Updates::kStale : Updates::kExact;
  }
  std::string MemoryFormula() const override {
    return "2P; server (2 + s)·P/K";
  }
  MemoryPerRank Memory(double P, double s, int64_t n,
                       int64_t k) const override {
    return PsMemory(P, s, static_cast<double>(k));
  }
};

}  // namespace

RINGSIDE_REGISTER_FORMULA(AsyncPsFormula, 5);

}  // namespace ringside

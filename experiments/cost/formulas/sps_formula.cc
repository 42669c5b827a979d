// sps: one parameter server. Every worker pushes M to it and pulls M back,
// so the server's link carries n·M in and n·M out; d and the chunk
// pipeline's fill and drain 2·n·C/B (C: --chunk_kb, else AutoChunkBytes)
// as cost_model.h explains. With the server beside rank 0
// (CostInputs::servers_beside_rank0, DataParallel's layout) rank 0's
// bytes stay off the links and its link carries the others': n' = n − 1
// in the link terms (n = 1: none).
//   comm      d · n'·M/B + 2α + 2·n'·C/B (n' = n, or n − 1 beside rank 0)
//   CPU       M · w + n · M · s + ρ (w, s, ρ of the run's transport:
//             gRPC's, or the bulk path's with --ps_transport=tcp, PsCpuTerms)
//   memory    worker 2P (parameters, gradients); the server (2 + s)·P, the
//             parameters, their state and one accumulator
//   W         2nM bytes sent (n pushes, n pulls)
//   backward  nothing starts in backward
//   updates   exact
#include "experiments/cost/formulas/formula_registry.h"
#include "experiments/cost/formulas/formula_support.h"

namespace ringside {
namespace {

class SpsFormula : public StrategyFormula {
 public:
  std::string name() const override { return "sps"; }
  std::vector<std::string> options() const override {
    return {"chunk_kb", "ps_transport"};
  }
  void Terms(const CostInputs& in, Prediction& p) const override {
    const double n = static_cast<double>(in.workers);
    const double M = in.model_bytes;
    p.servers = 1;
    const double over_links = in.servers_beside_rank0 ? n - 1 : n;
    p.bandwidth_s = DuplexFactor(in) * over_links * M / in.bandwidth_Bps;
    p.latency_s = 2.0 * in.latency_s;
    p.overhead_s = PsPipelineSeconds(in, 1) * over_links / n;
    const PsCpu ps = PsCpuTerms(in);
    p.streamed_cpu_s = M * ps.worker_byte_s + n * M * ps.server_byte_s;
    p.cpu_s = p.streamed_cpu_s + ps.round_s;
  }
  double BytesSentPerStep(const CostInputs& in) const override {
    return 2 * static_cast<double>(in.workers) * in.model_bytes;
  }
  double CommCpuDemandSeconds(const CostInputs& in,
                              const Prediction& p) const override {
    return PsCpuDemandSeconds(in);
  }
  std::string MemoryFormula() const override {
    return "2P; server (2 + s)·P";
  }
  MemoryPerRank Memory(double P, double s, int64_t n,
                       int64_t k) const override {
    return PsMemory(P, s, 1.0);
  }
};

}  // namespace

RINGSIDE_REGISTER_FORMULA(SpsFormula, 1);

}  // namespace ringside

#include "experiments/calibration/calibration.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "collectives/collective.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "experiments/calibration/calibration_benchmarks.h"
#include "experiments/cost/link_estimate.h"

namespace ringside {
namespace {

using calibration_bench::CallStart;
using calibration_bench::CollectiveOp;
using calibration_bench::kRanks;
using calibration_bench::kSmallBytes;
using calibration_bench::PsRound;
using calibration_bench::TimeCollective;
using calibration_bench::TimeCopy;
using calibration_bench::TimeFastestPsRound;
using calibration_bench::TimeHalfAllReduce;
using calibration_bench::TimeHalfConversions;
using calibration_bench::TimePsRound;

constexpr int64_t kMaxBenchmarkBytes = int64_t{256} << 20;
constexpr int64_t kSmallPsBytes = int64_t{16} << 10;

// The CPU time of 1 and of 2 workers' rounds against `servers`, beside as
// many ComputeStandIns as workers: per model byte, the 1-worker round's and
// each further worker's (q_1, q_w). Beside stand-ins whatever the run's
// compute: the cores' bound these serve binds only on saturated cores, and
// there a round costs more CPU than on idle ones. With emulated compute
// (which sleeps) the other workers' rounds are what saturates them.
absl::StatusOr<PsRoundCpu> TimePsRoundCpu(int servers, int64_t bytes,
                                          int64_t tensors,
                                          absl::Duration timeout) {
  RS_ASSIGN_OR_RETURN(const PsRound one,
                      TimePsRound(servers, 1, bytes, tensors, timeout, 1));
  RS_ASSIGN_OR_RETURN(const PsRound two,
                      TimePsRound(servers, 2, bytes, tensors, timeout, 2));
  PsRoundCpu out;
  out.servers = servers;
  out.round_1_cpu_s = one.cpu_s;
  out.round_2_cpu_s = two.cpu_s;
  const double m = static_cast<double>(bytes);
  out.byte_s = one.cpu_s / m;
  out.worker_byte_s = std::max(0.0, two.cpu_s - one.cpu_s) / m;
  return out;
}

// The parameter-server rounds against `servers` servers and the costs
// from them: the round of 1 and of 2 workers on `bytes` (m of them) in
// `tensors` tensors, and a 16 KiB model's round, which is the per-round
// cost ρ (each TimeFastestPsRound). The CPU of a round at n workers is its
// time less its link time n·M/B and ρ, = M·w + n·M·s: the 2-worker round's
// extra over the 1-worker one is the servers' s, the rest the worker's w.
absl::StatusOr<PsCalibration> TimePs(int servers, int64_t bytes,
                                     int64_t tensors, double m, double B,
                                     absl::Duration timeout,
                                     const std::string& transport = "grpc") {
  PsCalibration p;
  p.servers = servers;
  RS_ASSIGN_OR_RETURN(p.round_1_s, TimeFastestPsRound(servers, 1, bytes,
                                                      tensors, timeout,
                                                      transport));
  RS_ASSIGN_OR_RETURN(p.round_2_s, TimeFastestPsRound(servers, 2, bytes,
                                                      tensors, timeout,
                                                      transport));
  RS_ASSIGN_OR_RETURN(p.round_small_s,
                      TimeFastestPsRound(servers, 1, kSmallPsBytes, 1,
                                         timeout, transport));
  SplitPsCpu(m, B, &p);
  return p;
}

// Writing into pages given back (TensorShards::Release) against writing
// into resident ones: `bytes` (whole pages) written kRefaultRounds times
// each way; sets the medians of both in `c`.
constexpr int kRefaultRounds = 15;
constexpr int64_t kMaxRefaultBytes = int64_t{64} << 20;
// The most bytes the compression benchmarks (PowerSGD's, top-k's, sign's)
// work on (their memory and time).
constexpr int64_t kMaxLowRankBytes = int64_t{64} << 20;
absl::Status TimeRefault(int64_t bytes, Calibration* c) {
  const int64_t page = sysconf(_SC_PAGESIZE);
  bytes = std::max(page, bytes / page * page);
  void* region = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (region == MAP_FAILED) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "calibration: mmap of ", bytes, " bytes failed: ", strerror(errno)));
  }
  char* p = static_cast<char*>(region);
  std::memset(p, 1, bytes);
  std::vector<double> resident, refault;
  for (int i = 0; i < kRefaultRounds; ++i) {
    Stopwatch warm;
    std::memset(p, i, bytes);
    resident.push_back(warm.ElapsedSeconds());
    madvise(p, bytes, MADV_DONTNEED);
    Stopwatch cold;
    std::memset(p, i, bytes);
    refault.push_back(cold.ElapsedSeconds());
  }
  munmap(region, bytes);
  c->refault_bytes = bytes;
  c->resident_write_s = Median(resident);
  c->refault_write_s = Median(refault);
  c->cpu.refault_byte_s =
      std::max(0.0, c->refault_write_s - c->resident_write_s) /
      static_cast<double>(bytes);
  return absl::OkStatus();
}

}  // namespace

double CpuPerByte(double big_s, double small_s, double big_bytes,
                  double small_bytes, double bandwidth_Bps) {
  if (big_bytes <= small_bytes) return 0;
  const double slope = (big_s - small_s) / (big_bytes - small_bytes);
  return std::max(0.0, slope - 1.0 / bandwidth_Bps);
}

void SplitPsCpu(double m, double B, PsCalibration* p) {
  const double cpu1 = std::max(0.0, p->round_1_s - m / B - p->round_small_s);
  const double cpu2 =
      std::max(0.0, p->round_2_s - 2 * m / B - p->round_small_s);
  p->server_byte_s = std::max(0.0, (cpu2 - cpu1) / m);
  p->worker_byte_s = std::max(0.0, cpu1 / m - p->server_byte_s);
}

absl::StatusOr<Calibration> Calibrate(const CalibrationOptions& o) {
  if (o.model_bytes <= 0 || o.num_tensors < 1 || o.cores < 0 ||
      o.servers < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "calibration: model_bytes must be > 0, num_tensors >= 1, cores "
        ">= 0 and servers >= 1; got ",
        o.model_bytes, ", ", o.num_tensors, ", ", o.cores, ", ", o.servers));
  }
  if (!(o.busy_before_call_s >= 0 && o.busy_before_call_s <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "calibration: busy_before_call_s must be in [0, 1] s; got ",
        o.busy_before_call_s));
  }
  const Stopwatch clock;
  Calibration c;
  c.busy_before_call_s = o.busy_before_call_s;
  c.benchmark_bytes = std::min(o.model_bytes, kMaxBenchmarkBytes);
  const int64_t tensors =
      std::min<int64_t>(o.num_tensors, c.benchmark_bytes / 4);
  RS_ASSIGN_OR_RETURN(const LinkEstimate link,
                      EstimateLink(LinkHints{}, o.timeout));
  c.loopback_bandwidth_Bps = link.bandwidth_Bps;
  c.loopback_latency_s = link.latency_s;
  const double B = link.bandwidth_Bps;

  // Averaging, as ring, fusion, zero1 and the sharded gradients call them:
  // the scaling pass after the sum is part of a byte's cost.
  const CollectiveOp allreduce = [&](Collective& g, absl::Span<float> d,
                                     const std::vector<int64_t>&) {
    return g.AllReduce(d, ReduceOp::kAverage, o.timeout);
  };
  const CollectiveOp reduce_scatter = [&](Collective& g, absl::Span<float> d,
                                          const std::vector<int64_t>& counts) {
    return g.ReduceScatter(d, counts, ReduceOp::kAverage, o.timeout);
  };
  const CollectiveOp allgather = [&](Collective& g, absl::Span<float> d,
                                     const std::vector<int64_t>& counts) {
    return g.AllGatherV(d, counts, o.timeout);
  };
  const int64_t big = c.benchmark_bytes / 4, small = kSmallBytes / 4;
  c.small_bytes = small * 4;
  // Bytes a rank sends at 2 ranks: all-reduce M, the others M/2.
  const double m = static_cast<double>(big) * 4,
               s = static_cast<double>(small) * 4;
  // The per-byte costs and the fixed cost of a ring step from quiet calls;
  // the wake-up of a step's collectives, which start behind its compute,
  // as a small call's busy start less its quiet one. (Slopes between busy
  // starts lose the bytes' cost as the busy-wait grows: the stall of a
  // small call grows with it, that of a big call much less, as its
  // transfer runs through the stall. After 3.6 ms of busy-waiting a 64 KiB
  // all-reduce took 3.9 ms and a 4.5 MB one 4.5-4.7 ms here.)
  const CallStart busy{true, o.busy_before_call_s}, quiet;
  RS_ASSIGN_OR_RETURN(c.allreduce_s,
                      TimeCollective(allreduce, big, quiet, o.timeout));
  RS_ASSIGN_OR_RETURN(c.allreduce_small_busy_s,
                      TimeCollective(allreduce, small, busy, o.timeout));
  RS_ASSIGN_OR_RETURN(c.allreduce_small_s,
                      TimeCollective(allreduce, small, quiet, o.timeout));
  RS_ASSIGN_OR_RETURN(c.reduce_scatter_s,
                      TimeCollective(reduce_scatter, big, quiet, o.timeout));
  RS_ASSIGN_OR_RETURN(c.reduce_scatter_small_s,
                      TimeCollective(reduce_scatter, small, quiet, o.timeout));
  RS_ASSIGN_OR_RETURN(c.allgather_s,
                      TimeCollective(allgather, big, quiet, o.timeout));
  RS_ASSIGN_OR_RETURN(c.allgather_small_s,
                      TimeCollective(allgather, small, quiet, o.timeout));
  c.cpu.allreduce_byte_s =
      CpuPerByte(c.allreduce_s, c.allreduce_small_s, m, s, B);
  c.cpu.reduce_scatter_byte_s =
      CpuPerByte(c.reduce_scatter_s, c.reduce_scatter_small_s, m / 2, s / 2,
                 B);
  c.cpu.allgather_byte_s =
      CpuPerByte(c.allgather_s, c.allgather_small_s, m / 2, s / 2, B);
  RS_ASSIGN_OR_RETURN(c.half_allreduce_s,
                      TimeHalfAllReduce(big, quiet, o.timeout));
  RS_ASSIGN_OR_RETURN(c.half_allreduce_small_busy_s,
                      TimeHalfAllReduce(small, busy, o.timeout));
  RS_ASSIGN_OR_RETURN(c.half_allreduce_small_s,
                      TimeHalfAllReduce(small, quiet, o.timeout));
  // fp16 on the wire: a rank sends half the float bytes.
  c.cpu.half_allreduce_byte_s = CpuPerByte(
      c.half_allreduce_s, c.half_allreduce_small_s, m / 2, s / 2, B);
  c.half_convert_s = TimeHalfConversions(big);
  c.cpu.half_convert_byte_s = c.half_convert_s / m;
  // Its own wake-up: its own Gloo group and fp16 sum carry it.
  c.cpu.half_collective_wake_s = std::max(
      0.0, c.half_allreduce_small_busy_s - c.half_allreduce_small_s);
  const double allreduce_slope =
      c.cpu.allreduce_byte_s + 1.0 / B;  // all of a byte's time
  // The quiet 64 KiB all-reduce's time less its bytes and its two
  // messages' α: two ring steps' fixed cost.
  c.cpu.collective_step_s =
      std::max(0.0, c.allreduce_small_s - s * allreduce_slope -
                        2 * (kRanks - 1) * link.latency_s) /
      (2 * (kRanks - 1));
  c.cpu.collective_wake_s =
      std::max(0.0, c.allreduce_small_busy_s - c.allreduce_small_s);
  RS_RETURN_IF_ERROR(
      TimeRefault(std::min(c.benchmark_bytes, kMaxRefaultBytes), &c));

  RS_ASSIGN_OR_RETURN(
      c.ps, TimePs(1, c.benchmark_bytes, tensors, m, B, o.timeout));
  c.cpu.ps_worker_byte_s = c.ps.worker_byte_s;
  c.cpu.ps_server_byte_s = c.ps.server_byte_s;
  c.cpu.ps_round_s = c.ps.round_small_s;
  RS_ASSIGN_OR_RETURN(c.ps_tcp, TimePs(1, c.benchmark_bytes, tensors, m, B,
                                       o.timeout, "tcp"));
  c.cpu.ps_tcp_worker_byte_s = c.ps_tcp.worker_byte_s;
  c.cpu.ps_tcp_server_byte_s = c.ps_tcp.server_byte_s;
  c.cpu.ps_tcp_round_s = c.ps_tcp.round_small_s;
  if (o.servers > 1) {
    RS_ASSIGN_OR_RETURN(c.ps_sharded, TimePs(o.servers, c.benchmark_bytes,
                                             tensors, m, B, o.timeout));
    c.cpu.ps_sharded_servers = o.servers;
    c.cpu.ps_sharded_worker_byte_s = c.ps_sharded.worker_byte_s;
    c.cpu.ps_sharded_server_byte_s = c.ps_sharded.server_byte_s;
    c.cpu.ps_sharded_round_s = c.ps_sharded.round_small_s;
  }
  // async_ps's rounds beside compute stand-ins, against its K servers.
  RS_ASSIGN_OR_RETURN(c.ps_round_cpu, TimePsRoundCpu(o.servers,
                                                     c.benchmark_bytes,
                                                     tensors, o.timeout));
  c.cpu.ps_round_cpu_servers = c.ps_round_cpu.servers;
  c.cpu.ps_round_cpu_byte_s = c.ps_round_cpu.byte_s;
  c.cpu.ps_round_cpu_worker_byte_s = c.ps_round_cpu.worker_byte_s;
  c.cpu.copy_byte_s = TimeCopy(c.benchmark_bytes);
  const calibration_bench::LowRankTimes lowrank =
      calibration_bench::TimeLowRankCompression(
          o.tensor_shapes, std::max<int64_t>(1, o.lowrank_rank),
          std::min(c.benchmark_bytes, kMaxLowRankBytes) / 4);
  c.lowrank_matrices = lowrank.matrices;
  c.lowrank_rank = lowrank.rank;
  c.lowrank_multiply_adds = lowrank.multiply_adds;
  c.lowrank_elements = lowrank.elements;
  c.lowrank_products_s = lowrank.products_s;
  c.lowrank_feedback_s = lowrank.feedback_s;
  c.cpu.lowrank_multiply_add_s = lowrank.products_s / lowrank.multiply_adds;
  c.cpu.error_feedback_element_s = lowrank.feedback_s / lowrank.elements;
  const calibration_bench::GatherCompressionTimes gather =
      calibration_bench::TimeGatherCompression(
          o.tensor_shapes, tensors,
          std::min(c.benchmark_bytes, kMaxLowRankBytes) / 4, 0.01);
  c.gather_elements = gather.elements;
  c.topk_s = gather.topk_s;
  c.sign_pack_s = gather.sign_pack_s;
  c.sign_add_s = gather.sign_add_s;
  c.cpu.topk_element_s = gather.topk_s / gather.elements;
  c.cpu.sign_pack_element_s = gather.sign_pack_s / gather.elements;
  c.cpu.sign_add_element_s = gather.sign_add_s / gather.elements;
  c.cpu.cores = o.cores;
  c.wall_s = clock.ElapsedSeconds();
  return c;
}

std::string CalibrationLine(const Calibration& c) {
  auto ns = [](double s_per_byte) {
    return absl::StrFormat("%.2f ns/B", s_per_byte * 1e9);
  };
  auto us = [](double s) { return absl::StrFormat("%.0f µs", s * 1e6); };
  auto ps = [&](const PsCalibration& p, const char* used_by) {
    return absl::StrCat("against ", p.servers,
                        p.servers == 1 ? " server" : " servers", " (",
                        used_by, ") worker ", ns(p.worker_byte_s),
                        " per step, server ", ns(p.server_byte_s),
                        " per worker, ", us(p.round_small_s), " per round");
  };
  return absl::StrCat(
      "Calibration (measured on this machine before the strategies ran, ",
      absl::StrFormat("%.1f s, M = %.1f MB; loopback B = %.2f Gbit/s", c.wall_s,
                      c.benchmark_bytes / 1e6,
                      c.loopback_bandwidth_Bps * 8 / 1e9),
      "), CPU beyond the link: all-reduce ", ns(c.cpu.allreduce_byte_s),
      ", fp16 all-reduce ", ns(c.cpu.half_allreduce_byte_s),
      " (per wire byte, with the conversions), reduce-scatter ",
      ns(c.cpu.reduce_scatter_byte_s), ", all-gather ",
      ns(c.cpu.allgather_byte_s), ", ", us(c.cpu.collective_step_s),
      " per ring step, ", us(c.cpu.collective_wake_s),
      absl::StrFormat(" to wake a step's collectives from cores busy for "
                      "%.2f ms before them (%s; ",
                      c.busy_before_call_s * 1e3,
                      c.busy_before_call_s > 0
                          ? "the baseline's compute per step"
                          : "emulated compute sleeps: idle cores"),
      us(c.cpu.half_collective_wake_s),
      " for the fp16 all-reduce; its conversions ",
      ns(c.cpu.half_convert_byte_s),
      " per model byte); writing into pages given back ",
      ns(c.cpu.refault_byte_s), " beyond resident ones (zero3's gathers)",
      "; parameter server: ",
      ps(c.ps, "sps"), "; over the bulk path ",
      ps(c.ps_tcp, "--ps_transport=tcp"),
      c.ps_sharded.servers > 0 ? absl::StrCat("; ", ps(c.ps_sharded,
                                                       "dps, async_ps"))
                               : "",
      absl::StrFormat("; async_ps's rounds beside compute stand-ins "
                      "against %d servers: "
                      "%.2f ms of CPU for 1 worker, %.2f ms for 2",
                      c.ps_round_cpu.servers,
                      1e3 * c.ps_round_cpu.round_1_cpu_s,
                      1e3 * c.ps_round_cpu.round_2_cpu_s),
      "; copies ", ns(c.cpu.copy_byte_s),
      absl::StrFormat("; PowerSGD (rank %d, %d matrices) %.3f ns per "
                      "multiply-add, error feedback %.2f ns per element",
                      c.lowrank_rank, c.lowrank_matrices,
                      1e9 * c.cpu.lowrank_multiply_add_s,
                      1e9 * c.cpu.error_feedback_element_s),
      absl::StrFormat("; top-k %.2f ns per element (ratio 0.01); sign %.2f "
                      "ns per element packed, %.2f ns per element and rank "
                      "added",
                      1e9 * c.cpu.topk_element_s,
                      1e9 * c.cpu.sign_pack_element_s,
                      1e9 * c.cpu.sign_add_element_s),
      "; servers' CPU shared by ",
      c.cpu.cores > 0 ? absl::StrCat(c.cpu.cores, " cores") : "no limit", ".");
}

nlohmann::json CalibrationJson(const Calibration& c) {
  nlohmann::json j = CpuCostsJson(c.cpu);
  j.update({{"loopback_bandwidth_Bps", c.loopback_bandwidth_Bps},
            {"loopback_latency_s", c.loopback_latency_s},
            {"allreduce_s", c.allreduce_s},
            {"allreduce_small_s", c.allreduce_small_s},
            {"allreduce_small_busy_s", c.allreduce_small_busy_s},
            {"half_allreduce_s", c.half_allreduce_s},
            {"half_allreduce_small_s", c.half_allreduce_small_s},
            {"half_allreduce_small_busy_s", c.half_allreduce_small_busy_s},
            {"half_convert_s", c.half_convert_s},
            {"lowrank_matrices", c.lowrank_matrices},
            {"lowrank_rank", c.lowrank_rank},
            {"lowrank_multiply_adds", c.lowrank_multiply_adds},
            {"lowrank_elements", c.lowrank_elements},
            {"lowrank_products_s", c.lowrank_products_s},
            {"lowrank_feedback_s", c.lowrank_feedback_s},
            {"gather_elements", c.gather_elements},
            {"topk_s", c.topk_s},
            {"sign_pack_s", c.sign_pack_s},
            {"sign_add_s", c.sign_add_s},
            {"reduce_scatter_s", c.reduce_scatter_s},
            {"reduce_scatter_small_s", c.reduce_scatter_small_s},
            {"allgather_s", c.allgather_s},
            {"allgather_small_s", c.allgather_small_s},
            {"small_bytes", c.small_bytes},
            {"resident_write_s", c.resident_write_s},
            {"refault_write_s", c.refault_write_s},
            {"refault_bytes", c.refault_bytes},
            {"ps_round_1_s", c.ps.round_1_s},
            {"ps_round_2_s", c.ps.round_2_s},
            {"ps_round_small_s", c.ps.round_small_s},
            {"ps_tcp_round_1_s", c.ps_tcp.round_1_s},
            {"ps_tcp_round_2_s", c.ps_tcp.round_2_s},
            {"ps_tcp_round_small_s", c.ps_tcp.round_small_s},
            {"ps_sharded_round_1_s", c.ps_sharded.round_1_s},
            {"ps_sharded_round_2_s", c.ps_sharded.round_2_s},
            {"ps_sharded_round_small_s", c.ps_sharded.round_small_s},
            {"ps_round_1_cpu_s", c.ps_round_cpu.round_1_cpu_s},
            {"ps_round_2_cpu_s", c.ps_round_cpu.round_2_cpu_s},
            {"busy_before_call_s", c.busy_before_call_s},
            {"benchmark_bytes", c.benchmark_bytes},
            {"wall_s", c.wall_s}});
  return j;
}

}  // namespace ringside

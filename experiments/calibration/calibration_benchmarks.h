// The timed benchmarks Calibrate (calibration.h) derives its costs from:
// calls of the workers' collectives between kRanks ranks (threads) over
// loopback TCP, push+pull rounds of the workers' PsSessions against
// in-process servers, ring_fp16's conversions and copies. Each returns
// seconds (the typical of repeated calls, as each says); the costs derived
// from them are calibration.cc's.
//
// Blocking; every call and wait is bounded by `timeout`. Not thread-safe
// (they use the machine).
#ifndef RINGSIDE_EXPERIMENTS_CALIBRATION_CALIBRATION_BENCHMARKS_H_
#define RINGSIDE_EXPERIMENTS_CALIBRATION_CALIBRATION_BENCHMARKS_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "collectives/collective.h"

namespace ringside {
namespace calibration_bench {

// The ranks of the timed collectives.
inline constexpr int kRanks = 2;
// A small call's buffer (bytes): its fastest call, not its median, is its
// time after quiet starts (TypicalOfSlowest in calibration_benchmarks.cc).
inline constexpr int64_t kSmallBytes = int64_t{64} << 10;

// How the ranks start each timed call: quiet, from a barrier with their
// cores idle; busy, after busy_s of busy-waiting on every rank, as a
// training step's compute keeps the cores busy until its first collective
// (CalibrationOptions::busy_before_call_s).
struct CallStart {
  bool busy = false;
  double busy_s = 0;
};

// A Collective operation on a rank's `data`, split in kRanks shards.
using CollectiveOp = std::function<absl::Status(
    Collective&, absl::Span<float> data, const std::vector<int64_t>& counts)>;

// Times `op` on `floats` floats in the workers' Gloo Collective, the
// ranks starting each call as `start` says.
absl::StatusOr<double> TimeCollective(const CollectiveOp& op, int64_t floats,
                                      CallStart start, absl::Duration timeout);

// Times ring_fp16's all-reduce of `floats` floats: to fp16, Gloo's fp16
// sum all-reduce (GlooHalfAllReduce), back to float32; the ranks starting
// each call as `start` says.
absl::StatusOr<double> TimeHalfAllReduce(int64_t floats, CallStart start,
                                         absl::Duration timeout);

// One push+pull round of `workers` PsSessions (threads) against `servers`
// in-process servers, for `bytes` in `tensors` tensors: its
// TypicalOfSlowest time, and this process's CPU time per round (the
// workers' threads and the servers': rank 0's end of the untimed first
// round to its end of the last, over the timed rounds, which keep the
// workers in step), with `busy` ComputeStandIns running throughout.
struct PsRound {
  double wall_s = 0;
  double cpu_s = 0;
};
// `transport`: the workers' PsOptions::transport ("grpc" or "tcp").
absl::StatusOr<PsRound> TimePsRound(int servers, int workers, int64_t bytes,
                                    int64_t tensors, absl::Duration timeout,
                                    int busy = 0,
                                    const std::string& transport = "grpc");

// The faster of kPsClusters clusters' TimePsRound, each started afresh:
// a disturbed cluster runs all its rounds slow. Back to back on the 2-core
// VM two workers' round against one server took 12.7-14.5 ms in six
// clusters; one compare run's single cluster took 21.7 ms, and put sps and
// dps at n = 2 at +38% and +22%.
absl::StatusOr<double> TimeFastestPsRound(
    int servers, int workers, int64_t bytes, int64_t tensors,
    absl::Duration timeout, const std::string& transport = "grpc");

// Copying `bytes` from one buffer into another (as async_ps's training
// thread copies its gradient out and the newest parameters in), the
// median of kCopyRounds, per byte.
double TimeCopy(int64_t bytes);

// ring_fp16's conversions of `floats` floats to fp16 and back (as
// RingFp16Strategy::ReduceBucket converts), the median of
// kConvertRounds.
double TimeHalfConversions(int64_t floats);

// PowerSGD's compute (powersgd_kernels.h) at `rank` on the matrices of
// `shapes` (tensors of 2+ dimensions as rows × the rest, in order, each
// that still fits in `max_elements` in all; none: one matrix of about
// max_elements with rows ≈ cols): its three thin products and its
// error-feedback passes (AddError, TakeResult), each the sum over the matrices of the median of
// kLowRankRounds, in seconds, with the multiply-adds (3·rows·cols·r a
// matrix) and elements they covered.
struct LowRankTimes {
  int64_t matrices = 0, rank = 0;
  double multiply_adds = 0, elements = 0;
  double products_s = 0;
  double feedback_s = 0;
};
LowRankTimes TimeLowRankCompression(
    const std::vector<std::vector<int64_t>>& shapes, int64_t rank,
    int64_t max_elements);

// The all-gather hooks' compression (gather_kernels.h) on about
// `max_elements` floats split as the model's tensors are (`shapes`' sizes
// in order, each that still fits; none: T = `tensors` equal parts): top-k
// at `topk_ratio` (the error added, SelectTopK per part, the sent
// elements' error cleared) and sign's PackSigns and one rank's AddSigns
// per part, each the median of kGatherRounds, in seconds, with the
// elements they covered.
struct GatherCompressionTimes {
  double elements = 0;
  double topk_s = 0;
  double sign_pack_s = 0;
  double sign_add_s = 0;
};
GatherCompressionTimes TimeGatherCompression(
    const std::vector<std::vector<int64_t>>& shapes, int64_t tensors,
    int64_t max_elements, double topk_ratio);

}  // namespace calibration_bench
}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_CALIBRATION_CALIBRATION_BENCHMARKS_H_

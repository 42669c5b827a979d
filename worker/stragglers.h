// Stragglers: uneven workers on purpose, to see what bounded staleness buys
// and what a synchronous strategy loses. `--slow_ranks=R:F,...`
// stretches rank R's compute by F (> 0) in every step; `--compute_jitter=J`
// (in [0, 1)) multiplies every rank's compute in step t by (1 + J u), u
// uniform in [-1, 1) from a generator seeded by (seed, rank, step), so a
// run repeats exactly. A rank's factor in step t is F (1 + J u).
//
// How the loop applies it (worker/trainer.cc): emulated compute is scaled
// (Model::ScaleEmulatedCompute; any factor); real compute cannot run
// faster than it does, so it is stretched by waiting (factor - 1) times the
// measured time since the last gradient event before each gradient goes to
// the strategy (and after a pass that sends none), a factor below 1 running
// at the measured speed. The waits count as compute; every output labels
// the run as having stragglers.
#ifndef RINGSIDE_WORKER_STRAGGLERS_H_
#define RINGSIDE_WORKER_STRAGGLERS_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "models/model.h"

namespace ringside {

struct Stragglers {
  std::map<int, double> slow_ranks;  // rank -> factor F > 0
  double compute_jitter = 0;         // J in [0, 1)
  uint64_t seed = 1;

  bool any() const { return !slow_ranks.empty() || compute_jitter > 0; }
  // F (1 + J u) of `rank` in `step`.
  double Factor(int rank, int64_t step) const;
  // "rank 1 x1.5; jitter ±0.2" ("" without stragglers).
  std::string Describe() const;
};

// Stretches one rank's real compute in a pass by `factor` (> 1; <= 1: no
// waits): before each gradient event it waits (factor - 1) times the time
// since the last one (the pass start, or the end of the previous event's
// own call), and at the pass end for the compute after the last event.
// Not thread-safe; lives as long as the loop.
class ComputeStretch {
 public:
  void BeginPass(double factor, double now);
  // `inner` preceded by the wait (`inner` itself when there is nothing to
  // stretch or `inner` is empty). The result refers to this object.
  GradientReadyFn Wrap(const GradientReadyFn& inner);
  // The wait for the compute since the last event, at `now` (the pass
  // end); returns its seconds.
  double EndPass(double now);
  // Every wait so far, in seconds.
  double waited_s() const { return waited_s_; }

 private:
  double Wait(double now);
  double factor_ = 1.0;
  double mark_ = 0;
  double waited_s_ = 0;
};

// The entries of a --slow_ranks value whose rank is below `world_size`, in
// their order ("" when none is): what a run of fewer workers than the
// largest of a sweep receives. Entries that do not parse are kept, for the
// worker to refuse.
std::string SlowRanksWithin(const std::string& slow_ranks, int world_size);

// Parses --slow_ranks ("R:F[,R:F...]", "" for none) and --compute_jitter
// for a job of `world_size` ranks (0: ranks unchecked). INVALID_ARGUMENT
// naming the flag and the entry at fault: not R:F, R outside [0,
// world_size), R twice, F <= 0 or not finite, J outside [0, 1).
absl::StatusOr<Stragglers> ParseStragglers(const std::string& slow_ranks,
                                           double compute_jitter,
                                           int world_size, uint64_t seed);

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRAGGLERS_H_

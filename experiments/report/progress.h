// Progress lines of a run sweep: which run is going, how many there are and
// an ETA from the mean duration of the runs finished so far, e.g.
//
//   [3/9] ring n=2, 0 servers, ETA 00:42
//
// Pure functions; thread-safe.
#ifndef RINGSIDE_EXPERIMENTS_REPORT_PROGRESS_H_
#define RINGSIDE_EXPERIMENTS_REPORT_PROGRESS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ringside {

// Whole seconds as "MM:SS" below an hour ("00:42", "12:05") and "H:MM:SS"
// from an hour on ("1:02:03"); rounds to the nearest second. Negative or
// non-finite values give "--:--".
std::string FormatClock(double seconds);

// Seconds left for `total` runs when `finished_s` holds the durations of
// those already done: mean(finished_s) * (total - finished_s.size()), 0 when
// every run is done. nullopt while nothing has finished (no mean yet).
std::optional<double> EtaSeconds(int total,
                                 const std::vector<double>& finished_s);

// "[index/total] what, ETA MM:SS" for run `index` (1-based) about to start,
// the ETA covering it and every later run; "ETA --:--" before the first run
// has finished.
std::string ProgressLine(int index, int total, absl::string_view what,
                         const std::vector<double>& finished_s);

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_REPORT_PROGRESS_H_

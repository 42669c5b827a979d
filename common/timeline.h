// Timeline: a Chrome-trace ("Trace Event Format") JSON writer whose files
// open in Perfetto (ui.perfetto.dev) or chrome://tracing.
//
// One process track per rank (pid = rank, named "rank R") and one thread
// track per lane within it (e.g. "step" for compute, or a tensor's name for
// its communication phases). Every span is a complete event ("ph":"X") with
// microsecond timestamps on the steady clock (common/stopwatch.h), so the
// per-rank files of one host line up when merged (MergeTimelines).
//
// Events are streamed to the file as they are recorded (memory stays flat on
// long runs); Close() ends the JSON array. A file cut short by a crash still
// loads in chrome://tracing, which tolerates a missing "]".
// Thread-safe. A null Timeline* means "no timeline": use ScopedSpan / the
// free RecordSpan, which accept nullptr.
#ifndef RINGSIDE_COMMON_TIMELINE_H_
#define RINGSIDE_COMMON_TIMELINE_H_

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace ringside {

class Timeline {
 public:
  // Creates (truncates) `path`. "{rank}" in the path is replaced by `rank`,
  // so one flag serves every worker of a job.
  static absl::StatusOr<std::unique_ptr<Timeline>> Open(
      const std::string& path, int rank);
  ~Timeline();  // Close()s, logging any error.

  // The path actually written (after "{rank}" substitution).
  const std::string& path() const { return path_; }

  // Records `phase` on `lane` from start_s to end_s (NowSeconds() values).
  // `args` (a JSON object, may be empty) shows in the viewer's details.
  void Span(absl::string_view lane, absl::string_view phase, double start_s,
            double end_s, const nlohmann::json& args = nlohmann::json());

  // Ends the JSON array and closes the file; later Spans are dropped.
  absl::Status Close();

 private:
  Timeline(std::string path, std::FILE* file, int rank);
  int LaneId(absl::string_view lane) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void WriteEvent(const nlohmann::json& event)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string path_;
  const int rank_;
  absl::Mutex mu_;
  std::FILE* file_ ABSL_GUARDED_BY(mu_);
  bool first_event_ ABSL_GUARDED_BY(mu_) = true;
  absl::flat_hash_map<std::string, int> lanes_ ABSL_GUARDED_BY(mu_);
};

// Timeline::Span when `timeline` is non-null; nothing otherwise.
void RecordSpan(Timeline* timeline, absl::string_view lane,
                absl::string_view phase, double start_s, double end_s,
                const nlohmann::json& args = nlohmann::json());

// Records [construction, destruction) as one span; a no-op for nullptr.
class ScopedSpan {
 public:
  ScopedSpan(Timeline* timeline, std::string lane, std::string phase,
             nlohmann::json args = nlohmann::json());
  ~ScopedSpan();
  ScopedSpan(const ScopedSpan&) = delete;
  ScopedSpan& operator=(const ScopedSpan&) = delete;

 private:
  Timeline* timeline_;
  std::string lane_;
  std::string phase_;
  nlohmann::json args_;
  double start_s_ = 0.0;
};

// Concatenates the events of several timeline files (e.g. one per rank)
// into one file at `out_path`; a truncated input (missing "]") is accepted.
absl::Status MergeTimelines(const std::vector<std::string>& inputs,
                            const std::string& out_path);

}  // namespace ringside

#endif  // RINGSIDE_COMMON_TIMELINE_H_

#include "worker/strategies/sharded/sharded_checkpoint.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "core/checkpoint.h"

namespace ringside {

absl::StatusOr<ShardFileSet> FindNewestShardSet(const std::string& dir,
                                                int preferred_shards) {
  // Files present, by the number of shards their names say.
  std::map<int, std::set<int>> present;
  const std::regex name(R"(shard-(\d{1,6})-of-(\d{1,6})\.ckpt)");
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    std::smatch m;
    const std::string file = entry.path().filename().string();
    if (!std::regex_match(file, m, name)) continue;
    const int shard = std::stoi(m[1]), of = std::stoi(m[2]);
    if (of > 0 && shard < of) present[of].insert(shard);
  }
  if (error) {
    return absl::NotFoundError(absl::StrCat("cannot list the checkpoint "
                                            "directory ", dir, ": ",
                                            error.message()));
  }
  std::vector<std::string> seen;
  bool found = false;
  ShardFileSet best;
  for (const auto& [of, shards] : present) {
    seen.push_back(absl::StrCat(shards.size(), " of ", of));
    if (static_cast<int>(shards.size()) != of) continue;
    // The header's step only: LoadShardPieces checks every file it reads.
    RS_ASSIGN_OR_RETURN(const int64_t step,
                        ReadCheckpointStep(ShardCheckpointPath(dir, 0, of)));
    const bool better = !found || step > best.step ||
                        (step == best.step && of == preferred_shards);
    if (better) best = ShardFileSet{of, step};
    found = true;
  }
  if (!found) {
    return absl::NotFoundError(absl::StrCat(
        "no checkpoint at ", dir, ": no complete set of shard files (",
        ShardCheckpointPath(dir, 0, preferred_shards), " ...); found ",
        seen.empty() ? std::string("none")
                     : absl::StrCat("files ", absl::StrJoin(seen, ", "))));
  }
  return best;
}

absl::Status LoadShardPieces(const std::string& dir, const ShardFileSet& set,
                             const TensorLayout& layout,
                             const OptimizerConfig& optimizer,
                             absl::Span<const KeyRange> pieces, int first_file,
                             absl::Span<float> params,
                             const std::vector<absl::Span<float>>& state) {
  int64_t owned = 0;
  for (const KeyRange& p : pieces) owned += p.size();
  // Where each of this rank's pieces starts in the state buffers.
  std::vector<int64_t> state_at;
  int64_t at = 0;
  for (const KeyRange& p : pieces) {
    state_at.push_back(at);
    at += p.size();
  }
  std::vector<bool> filled(owned, false);
  int64_t copied = 0;
  for (int k = 0; k < set.num_shards && copied < owned; ++k) {
    const int file = (first_file + k) % set.num_shards;
    const std::string path = ShardCheckpointPath(dir, file, set.num_shards);
    RS_ASSIGN_OR_RETURN(Checkpoint c, ReadCheckpointFile(path));
    absl::Status fits = [&]() -> absl::Status {
      RS_RETURN_IF_ERROR(CheckCheckpointModel(c, layout, optimizer));
      if (c.step != set.step) {
        return absl::FailedPreconditionError(absl::StrCat(
            "it is of step ", c.step, ", file 0 of step ", set.step,
            " (a run stopped while writing them?)"));
      }
      const int64_t held = static_cast<int64_t>(c.params.size());
      const size_t buffers =
          held == 0 ? state.size() : c.optimizer_state.size() / held;
      if (buffers != state.size() ||
          (held > 0 &&
           c.optimizer_state.size() != buffers * static_cast<size_t>(held))) {
        return absl::FailedPreconditionError(absl::StrCat(
            "it holds ", c.optimizer_state.size(),
            " optimizer-state values for ", held, " parameters; this ",
            "optimizer keeps ", state.size(), " value(s) per parameter"));
      }
      return absl::OkStatus();
    }();
    RS_RETURN_IF_ERROR(Annotate(fits, absl::StrCat("checkpoint ", path)));
    const int64_t held = static_cast<int64_t>(c.params.size());
    // Walk the file's pieces and this rank's together (both in order).
    size_t mine = 0;
    int64_t file_at = 0;
    for (const KeyRange& theirs : c.pieces) {
      while (mine < pieces.size() && pieces[mine].end <= theirs.begin) ++mine;
      for (size_t m = mine; m < pieces.size() && pieces[m].begin < theirs.end;
           ++m) {
        const int64_t lo = std::max(theirs.begin, pieces[m].begin);
        const int64_t hi = std::min(theirs.end, pieces[m].end);
        const int64_t from = file_at + (lo - theirs.begin);
        const int64_t to = state_at[m] + (lo - pieces[m].begin);
        for (int64_t i = 0; i < hi - lo; ++i) {
          if (filled[to + i]) {
            return absl::FailedPreconditionError(absl::StrCat(
                "checkpoint ", path, " holds element ", lo + i,
                " again: the set's files overlap"));
          }
          filled[to + i] = true;
        }
        std::copy_n(c.params.begin() + from, hi - lo, params.begin() + lo);
        for (size_t b = 0; b < state.size(); ++b) {
          std::copy_n(c.optimizer_state.begin() + b * held + from, hi - lo,
                      state[b].begin() + to);
        }
        copied += hi - lo;
      }
      file_at += theirs.size();
    }
  }
  if (copied < owned) {
    int64_t element = -1;
    for (size_t m = 0; m < pieces.size() && element < 0; ++m) {
      for (int64_t i = 0; i < pieces[m].size(); ++i) {
        if (!filled[state_at[m] + i]) {
          element = pieces[m].begin + i;
          break;
        }
      }
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "the ", set.num_shards, " checkpoint files of step ", set.step,
        " in ", dir, " do not hold element ", element,
        " of the parameters (", owned - copied, " of this rank's ", owned,
        " are missing)"));
  }
  return absl::OkStatus();
}

}  // namespace ringside

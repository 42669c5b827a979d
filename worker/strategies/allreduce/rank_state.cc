#include "worker/strategies/allreduce/rank_state.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "core/key_range.h"

namespace ringside {
namespace {

std::string PathOf(const SyncContext& context) {
  return RankStateCheckpointPath(context.options.checkpoint_dir,
                                 context.rank, context.world_size);
}

}  // namespace

absl::Status WriteRankState(const SyncContext& context, int64_t step,
                            const std::string& strategy,
                            const std::string& what,
                            std::vector<float> state) {
  Checkpoint c;
  c.step = step + 1;
  c.shard = context.rank;
  c.num_shards = context.world_size;
  c.pieces = {KeyRange{0, context.layout.total_elements()}};
  c.layout = context.layout;
  c.optimizer = context.optimizer;
  c.writer = absl::StrCat(strategy, " ", what, ", rank ", context.rank,
                          " of ", context.world_size);
  c.params.assign(context.params.begin(), context.params.end());
  c.optimizer_state = std::move(state);
  return Annotate(WriteCheckpointFile(PathOf(context), c),
                  absl::StrCat(strategy, " ", what, " after step ", step));
}

absl::StatusOr<Checkpoint> ReadRankState(const SyncContext& context,
                                         const std::string& strategy,
                                         const std::string& what) {
  const std::string path = PathOf(context);
  absl::StatusOr<Checkpoint> c = ReadCheckpointFile(path);
  if (absl::IsNotFound(c.status())) {
    return absl::NotFoundError(absl::StrCat(
        strategy, " resumes ", what, " from ", path,
        ", which does not exist: the checkpoint was written by another "
        "strategy or another number of workers (each rank's is its own; "
        "resume with the workers that wrote it)"));
  }
  RS_RETURN_IF_ERROR(c.status());
  RS_RETURN_IF_ERROR(
      CheckCheckpointMatches(*c, context.layout, context.optimizer,
                             KeyRange{0, context.layout.total_elements()}));
  return c;
}

}  // namespace ringside

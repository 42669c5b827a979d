// One file on purpose: every method works on the one shard state under the
// same locks (config_mu_, the chunk locks, versions_mu_), taken in one order.
#include "server/param_shard.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/chunk_wire.h"
#include "common/status_macros.h"
#include "server/partitioner.h"

namespace ringside {
namespace {

constexpr absl::string_view kFloat32 = "float32";

}  // namespace

absl::Status ParamShardOptions::Validate() const {
  if (num_workers < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_workers must be >= 1, got ", num_workers));
  }
  if (num_shards < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_shards must be >= 1, got ", num_shards));
  }
  if (shard < 0 || shard >= num_shards) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shard ", shard, " is outside [0, num_shards=", num_shards, ")"));
  }
  if (checkpoint_every < 0 || (checkpoint_every > 0 && checkpoint_dir.empty())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "checkpoint_every must be >= 0 and needs a checkpoint_dir; got ",
        checkpoint_every, " and '", checkpoint_dir, "'"));
  }
  if (max_state_bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_state_bytes must be >= 0 (0: the machine's memory), got ",
        max_state_bytes));
  }
  return absl::OkStatus();
}

ParamShard::ParamShard(const ParamShardOptions& options)
    : options_(options), pushers_(options.num_workers) {
  registered_.assign(options_.num_workers, false);
  finished_.assign(options_.num_workers, false);
}

absl::Status ParamShard::CheckRank(int rank) const {
  const int pushers = pushers_.load();
  if (rank < 0 || rank >= pushers) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown rank ", rank, ": this server expects ranks [0, ", pushers,
        ")", pushers == options_.num_workers ? "" : " (one per host)"));
  }
  return absl::OkStatus();
}

absl::Status ParamShard::Resume(Checkpoint checkpoint) {
  if (checkpoint.shard != options_.shard ||
      checkpoint.num_shards != options_.num_shards) {
    return absl::InvalidArgumentError(absl::StrCat(
        "checkpoint is of shard ", checkpoint.shard, " of ",
        checkpoint.num_shards, "; this server is shard ", options_.shard,
        " of ", options_.num_shards));
  }
  absl::MutexLock lock(&config_mu_);
  if (configured_) {
    return absl::FailedPreconditionError(
        "Resume after a worker has registered");
  }
  resume_ = std::make_unique<Checkpoint>(std::move(checkpoint));
  return absl::OkStatus();
}

int64_t ParamShard::resume_step() const {
  absl::MutexLock lock(&config_mu_);
  return resume_step_;
}

std::optional<OptimizerConfig> ParamShard::job_optimizer() const {
  absl::MutexLock lock(&config_mu_);
  if (!configured_ || config_.summation) return std::nullopt;
  return config_.optimizer;
}

bool ParamShard::summation_job() const {
  absl::MutexLock lock(&config_mu_);
  return configured_ && config_.summation;
}

absl::StatusOr<KeyRange> ParamShard::Register(const Registration& r) {
  RS_RETURN_IF_ERROR(CheckRank(r.rank));
  if (r.world_size != options_.num_workers) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank ", r.rank, " says world_size=", r.world_size,
                     " but this server was started with --num_workers=",
                     options_.num_workers));
  }
  if (r.num_shards != options_.num_shards) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank ", r.rank, " expects ", r.num_shards,
                     " parameter servers but this server is shard ",
                     options_.shard, " of --num_shards=", options_.num_shards));
  }
  if (r.chunk_bytes <= 0 || r.chunk_bytes % 4 != 0 ||
      r.chunk_bytes > kMaxChunkBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "chunk_bytes must be a positive multiple of 4 of at most ",
        kMaxChunkBytes, " (1 GiB), got ", r.chunk_bytes));
  }
  if (r.layout.num_tensors() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rank ", r.rank, " registered a layout with no tensors (a model "
        "without parameters)"));
  }
  RS_RETURN_IF_ERROR(r.optimizer.Validate());
  if (r.summation &&
      (r.ranks_per_pusher < 1 || r.world_size % r.ranks_per_pusher != 0 ||
       r.start_step < 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rank ", r.rank, " registered a summation job with ranks_per_pusher=",
        r.ranks_per_pusher, " and start_step=", r.start_step,
        ": ranks_per_pusher must be >= 1 and divide world_size=",
        r.world_size, ", start_step >= 0"));
  }
  if (r.summation && r.rank >= r.world_size / r.ranks_per_pusher) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown rank ", r.rank, ": a summation job of ", r.world_size,
        " workers, ", r.ranks_per_pusher, " a host, pushes from ranks [0, ",
        r.world_size / r.ranks_per_pusher, ")"));
  }

  absl::MutexLock lock(&config_mu_);
  if (configured_) {
    if (r.summation != config_.summation ||
        (r.summation && (r.ranks_per_pusher != config_.ranks_per_pusher ||
                         r.start_step != config_.start_step))) {
      return absl::FailedPreconditionError(absl::StrCat(
          "rank ", r.rank, " registered ",
          r.summation ? absl::StrCat("a summation job (ranks_per_pusher=",
                                     r.ranks_per_pusher, ", start_step=",
                                     r.start_step, ")")
                      : std::string("an optimizing job"),
          " but rank ", config_.rank, " registered ",
          config_.summation
              ? absl::StrCat("a summation job (ranks_per_pusher=",
                             config_.ranks_per_pusher,
                             ", start_step=", config_.start_step, ")")
              : std::string("an optimizing job")));
    }
    if (r.layout != config_.layout) {
      return absl::FailedPreconditionError(
          absl::StrCat("rank ", r.rank, "'s model layout differs from rank ",
                       config_.rank, "'s: got\n", r.layout.DebugString(),
                       "expected\n", config_.layout.DebugString()));
    }
    if (!(r.optimizer == config_.optimizer)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "rank ", r.rank, "'s optimizer config {", r.optimizer.DebugString(),
          "} differs from rank ", config_.rank, "'s {",
          config_.optimizer.DebugString(), "}"));
    }
    if (r.chunk_bytes != config_.chunk_bytes ||
        r.partitioner != config_.partitioner) {
      return absl::FailedPreconditionError(
          absl::StrCat("rank ", r.rank, " uses chunk_bytes=", r.chunk_bytes,
                       " partitioner=", r.partitioner, " but rank ",
                       config_.rank, " uses chunk_bytes=", config_.chunk_bytes,
                       " partitioner=", config_.partitioner));
    }
  } else {
    RS_ASSIGN_OR_RETURN(std::unique_ptr<Partitioner> partitioner,
                        MakePartitioner(r.partitioner));
    RS_ASSIGN_OR_RETURN(std::vector<KeyRange> ranges,
                        partitioner->Partition(r.layout, options_.num_shards));
    KeyRange mine = ranges[options_.shard];
    RS_RETURN_IF_ERROR(CheckStateFits(r, mine));
    if (r.summation && resume_ != nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(
          "rank ", r.rank, " registered a summation job, which keeps no "
          "server state, but this server was started from a checkpoint; "
          "start it without --resume (the workers resume themselves)"));
    }
    std::unique_ptr<Optimizer> optimizer;
    if (!r.summation) {
      RS_ASSIGN_OR_RETURN(optimizer,
                          Optimizer::Create(r.optimizer, mine.size()));
    }
    const int pushers =
        r.summation ? r.world_size / r.ranks_per_pusher : options_.num_workers;
    if (resume_ != nullptr) {
      RS_RETURN_IF_ERROR(Annotate(
          CheckCheckpointMatches(*resume_, r.layout, r.optimizer, mine),
          absl::StrCat("resuming shard ", options_.shard)));
      RS_RETURN_IF_ERROR(
          Annotate(ImportOptimizerState(*optimizer, resume_->optimizer_state),
                   "resuming the optimizer state"));
    }
    all_ranges_ = std::move(ranges);
    range_ = mine;
    chunk_elements_ = r.chunk_bytes / 4;
    optimizer_ = std::move(optimizer);
    params_.assign(range_.size(), 0.0f);
    accum_.assign(range_.size(), 0.0f);
    for (const KeyRange& c : ChunkRange(range_, chunk_elements_)) {
      auto chunk = std::make_unique<Chunk>();
      chunk->range = c;
      chunk->pushed.assign(pushers, false);
      chunk->accepted.assign(pushers, 0);
      chunks_.push_back(std::move(chunk));
    }
    int64_t start_version = r.summation ? r.start_step : -1;
    if (resume_ != nullptr) {
      params_ = std::move(resume_->params);
      start_version = resume_step_ = resume_->step;
      resume_.reset();
    }
    {
      absl::MutexLock vlock(&versions_mu_);
      versions_.assign(chunks_.size(), start_version);
    }
    job_layout_ = r.layout;
    job_optimizer_ = r.optimizer;
    summation_ = r.summation;
    pushers_ = pushers;
    config_ = r;
    configured_ = true;
  }
  if (registered_[r.rank]) {
    return absl::AlreadyExistsError(
        absl::StrCat("rank ", r.rank, " registered twice"));
  }
  registered_[r.rank] = true;
  return range_;
}

absl::Status ParamShard::CheckStateFits(const Registration& r,
                                        const KeyRange& range) const {
  // An upper bound, in double: a hostile layout's counts may be near 2^60.
  const double n = static_cast<double>(range.size());
  const double chunks = std::ceil(n / static_cast<double>(r.chunk_bytes / 4));
  // Parameters (or a summation job's served sums), the accumulator and the
  // optimizer's state (none in a summation job).
  const double buffers =
      r.summation ? 2 : (r.optimizer.type == "adam" ? 4 : 3);
  const double need =
      n * 4 * buffers +
      chunks * (sizeof(Chunk) + sizeof(std::unique_ptr<Chunk>) +
                sizeof(int64_t) + options_.num_workers / 8.0 + 1);
  double limit = static_cast<double>(options_.max_state_bytes);
  if (limit <= 0) {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0) return absl::OkStatus();  // unknown
    limit = static_cast<double>(pages) * static_cast<double>(page);
  }
  if (need <= limit) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrFormat(
      "rank %d's model puts %d elements in chunks of %d bytes on shard %d, "
      "which needs about %.0f MiB (parameters, accumulation buffer, optimizer "
      "state) but this server allows %.0f MiB",
      r.rank, range.size(), r.chunk_bytes, options_.shard, need / (1 << 20),
      limit / (1 << 20)));
}

absl::StatusOr<int> ParamShard::ChunkAt(int64_t offset) const {
  if (offset >= range_.begin && offset < range_.end &&
      (offset - range_.begin) % chunk_elements_ == 0) {
    return static_cast<int>((offset - range_.begin) / chunk_elements_);
  }
  for (size_t s = 0; s < all_ranges_.size(); ++s) {
    const KeyRange& r = all_ranges_[s];
    if (offset >= r.begin && offset < r.end &&
        static_cast<int>(s) != options_.shard) {
      return absl::InvalidArgumentError(absl::StrCat(
          "offset ", offset, " is in range [", r.begin, ", ", r.end,
          ") owned by shard ", s, ", not by this shard ", options_.shard, " [",
          range_.begin, ", ", range_.end, ")"));
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("offset ", offset, " is not a chunk start of shard ",
                   options_.shard, " [", range_.begin, ", ", range_.end,
                   ") with chunks of ", chunk_elements_, " elements"));
}

absl::Status ParamShard::CheckPayload(const Chunk& chunk,
                                      absl::string_view dtype,
                                      int64_t bytes) const {
  if (dtype != kFloat32) {
    return absl::InvalidArgumentError(
        absl::StrCat("dtype '", dtype, "' is not supported (want float32)"));
  }
  const int64_t want = chunk.range.size() * 4;
  if (bytes != want) {
    return absl::InvalidArgumentError(
        absl::StrCat("chunk at offset ", chunk.range.begin, " has ", bytes,
                     " bytes, expected ", want));
  }
  return absl::OkStatus();
}

absl::Status ParamShard::PushInit(int rank, int64_t offset,
                                  absl::string_view dtype,
                                  absl::string_view data) {
  RS_RETURN_IF_ERROR(aborted());
  {
    absl::MutexLock lock(&config_mu_);
    if (!configured_) {
      return absl::FailedPreconditionError("PushInit before any Register");
    }
  }
  if (rank != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("only rank 0 sends initial parameters, got rank ", rank));
  }
  if (summation_) {
    return absl::FailedPreconditionError(
        "PushInit in a summation job, which takes no initial parameters");
  }
  RS_ASSIGN_OR_RETURN(int c, ChunkAt(offset));
  Chunk& chunk = *chunks_[c];
  RS_RETURN_IF_ERROR(CheckPayload(chunk, dtype, static_cast<int64_t>(data.size())));
  absl::MutexLock lock(&chunk.mu);
  {
    absl::MutexLock vlock(&versions_mu_);
    if (versions_[c] >= 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("chunk at offset ", offset, " was already initialized"));
    }
  }
  std::memcpy(params_.data() + (chunk.range.begin - range_.begin), data.data(),
              data.size());
  absl::MutexLock vlock(&versions_mu_);
  versions_[c] = 0;
  return absl::OkStatus();
}

absl::Status ParamShard::PushGradient(int rank, int64_t step, int64_t offset,
                                      absl::string_view dtype,
                                      absl::string_view data) {
  return PushGradient(rank, step, offset, dtype,
                      absl::MakeConstSpan(&data, 1));
}

absl::Status ParamShard::PushGradient(
    int rank, int64_t step, int64_t offset, absl::string_view dtype,
    absl::Span<const absl::string_view> payload) {
  RS_RETURN_IF_ERROR(aborted());
  RS_RETURN_IF_ERROR(CheckRank(rank));
  {
    absl::MutexLock lock(&config_mu_);
    if (!configured_ || !registered_[rank]) {
      return absl::FailedPreconditionError(
          absl::StrCat("rank ", rank, " pushed before registering"));
    }
  }
  RS_ASSIGN_OR_RETURN(int c, ChunkAt(offset));
  Chunk& chunk = *chunks_[c];
  int64_t bytes = 0;
  for (absl::string_view piece : payload) bytes += piece.size();
  RS_RETURN_IF_ERROR(CheckPayload(chunk, dtype, bytes));

  absl::MutexLock lock(&chunk.mu);
  int64_t version;
  {
    absl::MutexLock vlock(&versions_mu_);
    version = versions_[c];
  }
  if (version < 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "chunk at offset ", offset, " has no initial parameters yet"));
  }
  if (step != version) {
    ++wrong_step_refused_;
    return absl::FailedPreconditionError(absl::StrCat(
        "rank ", rank, " pushed a ", step < version ? "stale" : "future",
        " step ", step, " for chunk at offset ", offset,
        ", which is waiting for step ", version));
  }
  if (chunk.pushed[rank]) {
    ++duplicates_refused_;
    return absl::AlreadyExistsError(
        absl::StrCat("rank ", rank, " already pushed step ", step,
                     " for chunk at offset ", offset));
  }
  // Straight from the receive buffers (common/chunk_wire.h), the sum in
  // the order of the pushes. The last push of a chunk also averages and
  // steps the optimizer, block by block while the block is in cache: one
  // pass over memory instead of three (sum, average, optimizer), with the
  // same arithmetic in the same order (the optimizer is elementwise).
  const int64_t local = chunk.range.begin - range_.begin;
  float* acc = accum_.data() + local;
  const bool first = chunk.num_pushed == 0;
  const int pushers = pushers_.load();
  const bool last = chunk.num_pushed + 1 == pushers;
  ForEachFloatRun(payload, [&](int64_t at, const char* bytes, int64_t count) {
    constexpr int64_t kBlock = 2048;  // floats: 8 KiB of each array
    for (int64_t b = 0; b < count; b += kBlock) {
      const int64_t m = std::min(kBlock, count - b);
      float* out = acc + at + b;
      const char* in = bytes + 4 * b;
      if (first) {
        std::memcpy(out, in, m * 4);
      } else {
        for (int64_t i = 0; i < m; ++i) {
          float g;
          std::memcpy(&g, in + 4 * i, 4);
          out[i] += g;
        }
      }
      if (last) ApplyBlock(local + at + b, m, step);
    }
  });
  chunk.pushed[rank] = true;
  ++chunk.accepted[rank];
  if (++chunk.num_pushed == pushers) AdvanceChunk(chunk, step);
  return absl::OkStatus();
}

void ParamShard::ApplyBlock(int64_t local, int64_t n, int64_t step) {
  float* acc = accum_.data() + local;
  if (summation_) {
    std::memcpy(params_.data() + local, acc, n * 4);
    return;
  }
  const float scale = 1.0f / static_cast<float>(options_.num_workers);
  for (int64_t i = 0; i < n; ++i) acc[i] *= scale;
  optimizer_->Apply(local, absl::MakeSpan(params_.data() + local, n),
                    absl::MakeConstSpan(acc, n), step + 1);
}

void ParamShard::AdvanceChunk(Chunk& chunk, int64_t step) {
  std::fill(chunk.pushed.begin(), chunk.pushed.end(), false);
  chunk.num_pushed = 0;
  ++chunk.applied;
  const int c =
      static_cast<int>((chunk.range.begin - range_.begin) / chunk_elements_);
  std::unique_ptr<Checkpoint> snapshot;
  {
    absl::MutexLock vlock(&versions_mu_);
    versions_[c] = step + 1;
    const int64_t every = summation_ ? 0 : options_.checkpoint_every;
    if (every > 0 && (step + 1) % every == 0 &&
        std::all_of(versions_.begin(), versions_.end(),
                    [&](int64_t v) { return v == step + 1; })) {
      snapshot = std::make_unique<Checkpoint>(SnapshotLocked(step + 1));
    }
  }
  if (snapshot != nullptr) WriteCheckpoint(*snapshot);
}

Checkpoint ParamShard::SnapshotLocked(int64_t version) {
  Checkpoint c;
  c.step = version;
  c.shard = options_.shard;
  c.num_shards = options_.num_shards;
  if (range_.size() > 0) c.pieces = {range_};
  c.layout = job_layout_;
  c.optimizer = job_optimizer_;
  c.writer = absl::StrCat("ps_server shard ", options_.shard, " of ",
                          options_.num_shards);
  // Every chunk is at `version` and none can move on before pullers see
  // this version, which they cannot while we hold versions_mu_.
  c.params = params_;
  c.optimizer_state = ExportOptimizerState(*optimizer_);
  return c;
}

void ParamShard::WriteCheckpoint(const Checkpoint& checkpoint) {
  absl::Status s = WriteCheckpointFile(
      ShardCheckpointPath(options_.checkpoint_dir, options_.shard,
                          options_.num_shards),
      checkpoint);
  absl::MutexLock lock(&checkpoint_mu_);
  if (s.ok()) {
    ++checkpoints_written_;
  } else {
    checkpoint_error_ = s;
  }
}

int64_t ParamShard::checkpoints_written() const {
  absl::MutexLock lock(&checkpoint_mu_);
  return checkpoints_written_;
}

absl::Status ParamShard::checkpoint_error() const {
  absl::MutexLock lock(&checkpoint_mu_);
  return checkpoint_error_;
}

absl::StatusOr<ParamShard::PullCursor> ParamShard::StartPull(int rank,
                                                             int64_t version) {
  RS_RETURN_IF_ERROR(CheckRank(rank));
  if (version < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("negative version ", version));
  }
  {
    absl::MutexLock lock(&config_mu_);
    if (!configured_ || !registered_[rank]) {
      return absl::FailedPreconditionError(
          absl::StrCat("rank ", rank, " pulled before registering"));
    }
  }
  PullCursor cursor;
  cursor.version = version;
  cursor.sent.assign(chunks_.size(), false);
  cursor.remaining = static_cast<int>(chunks_.size());
  return cursor;
}

std::string ParamShard::MissingRanks(int c) const {
  Chunk& chunk = *chunks_[c];
  absl::MutexLock lock(&chunk.mu);
  std::vector<int> missing;
  for (int r = 0; r < pushers_.load(); ++r) {
    if (!chunk.pushed[r]) missing.push_back(r);
  }
  return absl::StrJoin(missing, ",");
}

absl::Status ParamShard::NextReadyChunk(PullCursor* cursor, absl::Time deadline,
                                        int64_t* offset, std::string* data) {
  absl::Span<const float> view;
  RS_RETURN_IF_ERROR(NextReadyChunk(cursor, deadline, offset, &view));
  data->assign(reinterpret_cast<const char*>(view.data()), view.size() * 4);
  return absl::OkStatus();
}

absl::Status ParamShard::NextReadyChunk(PullCursor* cursor, absl::Time deadline,
                                        int64_t* offset,
                                        absl::Span<const float>* data) {
  if (cursor->remaining <= 0) {
    return absl::OutOfRangeError("every chunk was already pulled");
  }
  int ready = -1;
  int64_t gone_version = -1;
  absl::Status abort;
  auto find_ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(versions_mu_) {
    if (!abort_.ok()) {
      abort = abort_;
      return true;
    }
    for (size_t c = 0; c < versions_.size(); ++c) {
      if (cursor->sent[c]) continue;
      if (versions_[c] == cursor->version) {
        ready = static_cast<int>(c);
        return true;
      }
      if (versions_[c] > cursor->version) {
        ready = static_cast<int>(c);
        gone_version = versions_[c];
        return true;
      }
    }
    return false;
  };
  int waiting_on = -1;
  int64_t waiting_version = 0;
  {
    absl::MutexLock vlock(&versions_mu_);
    if (!versions_mu_.AwaitWithDeadline(absl::Condition(&find_ready),
                                        deadline)) {
      for (size_t c = 0; c < versions_.size(); ++c) {
        if (!cursor->sent[c]) {
          waiting_on = static_cast<int>(c);
          waiting_version = versions_[c];
          break;
        }
      }
    }
  }
  if (!abort.ok()) return abort;
  if (waiting_on >= 0) {
    const KeyRange& r = chunks_[waiting_on]->range;
    std::string who =
        waiting_version < 0
            ? std::string("initial parameters from rank 0")
            : absl::StrCat("step ", waiting_version, " gradients from ranks [",
                           MissingRanks(waiting_on), "]");
    return absl::DeadlineExceededError(absl::StrCat(
        "shard ", options_.shard, ": version ", cursor->version, " of chunk [",
        r.begin, ", ", r.end, ") not ready by the deadline; ",
        "chunk is at version ", waiting_version, ", waiting for ", who));
  }
  Chunk& chunk = *chunks_[ready];
  if (gone_version >= 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "version ", cursor->version, " of chunk at offset ", chunk.range.begin,
        " is gone; the chunk is at version ", gone_version));
  }
  // A view, not a copy: the chunk stays at this version until every worker
  // has pushed the next step, and a worker pushes step v only after its
  // pull of version v has been received in full (PsSession joins the pull
  // before the next step starts), so nobody overwrites these floats while a
  // pull still sends them.
  *data = absl::MakeConstSpan(
      params_.data() + (chunk.range.begin - range_.begin), chunk.range.size());
  *offset = chunk.range.begin;
  cursor->sent[ready] = true;
  --cursor->remaining;
  return absl::OkStatus();
}

absl::Status ParamShard::Finish(int rank) {
  RS_RETURN_IF_ERROR(CheckRank(rank));
  absl::MutexLock lock(&config_mu_);
  if (!registered_[rank]) {
    return absl::FailedPreconditionError(
        absl::StrCat("rank ", rank, " finished without registering"));
  }
  if (!finished_[rank]) {
    finished_[rank] = true;
    ++num_finished_;
  }
  return absl::OkStatus();
}

bool ParamShard::WaitAllFinished(absl::Time deadline) {
  absl::MutexLock lock(&config_mu_);
  auto all = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(config_mu_) {
    return num_finished_ == pushers_.load() || !abort_finish_.ok();
  };
  config_mu_.AwaitWithDeadline(absl::Condition(&all), deadline);
  return num_finished_ == pushers_.load();
}

void ParamShard::Abort(const absl::Status& reason) {
  if (reason.ok()) return;
  {
    absl::MutexLock lock(&config_mu_);
    if (abort_finish_.ok()) abort_finish_ = reason;
  }
  absl::MutexLock vlock(&versions_mu_);
  if (abort_.ok()) abort_ = reason;
}

absl::Status ParamShard::aborted() const {
  absl::MutexLock vlock(&versions_mu_);
  return abort_;
}

ParamShard::UpdateCounts ParamShard::Counts() const {
  UpdateCounts counts;
  counts.duplicates_refused = duplicates_refused_.load();
  counts.wrong_step_refused = wrong_step_refused_.load();
  counts.pushes_per_rank.assign(pushers_.load(), 0);
  {
    absl::MutexLock lock(&config_mu_);
    if (!configured_) return counts;
  }
  counts.chunks = static_cast<int>(chunks_.size());
  bool first = true;
  for (const auto& chunk : chunks_) {
    absl::MutexLock lock(&chunk->mu);
    for (int r = 0; r < pushers_.load(); ++r) {
      const int64_t n = chunk->accepted[r];
      counts.pushes_per_rank[r] += n;
      counts.pushes_min = first ? n : std::min(counts.pushes_min, n);
      counts.pushes_max = first ? n : std::max(counts.pushes_max, n);
      first = false;
    }
    const bool first_chunk = chunk == chunks_.front();
    counts.applied_min = first_chunk ? chunk->applied
                                     : std::min(counts.applied_min,
                                                chunk->applied);
    counts.applied_max = std::max(counts.applied_max, chunk->applied);
  }
  absl::MutexLock vlock(&versions_mu_);
  if (!versions_.empty()) {
    counts.min_version = *std::min_element(versions_.begin(), versions_.end());
    counts.max_version = *std::max_element(versions_.begin(), versions_.end());
  }
  return counts;
}

int64_t ParamShard::MemoryBytes() const {
  absl::MutexLock lock(&config_mu_);
  if (!configured_) return 0;
  return static_cast<int64_t>(params_.size() + accum_.size()) * 4 +
         (optimizer_ == nullptr ? 0 : optimizer_->state_bytes());
}

int64_t ParamShard::MinVersion() const {
  absl::MutexLock vlock(&versions_mu_);
  if (versions_.empty()) return -1;
  return *std::min_element(versions_.begin(), versions_.end());
}

std::vector<float> ParamShard::Parameters() const {
  std::vector<float> out(params_.size());
  for (const auto& chunk : chunks_) {
    absl::MutexLock lock(&chunk->mu);
    const int64_t local = chunk->range.begin - range_.begin;
    std::copy(params_.begin() + local,
              params_.begin() + local + chunk->range.size(),
              out.begin() + local);
  }
  return out;
}

KeyRange ParamShard::range() const {
  absl::MutexLock lock(&config_mu_);
  return range_;
}

int64_t ParamShard::chunk_elements() const {
  absl::MutexLock lock(&config_mu_);
  return chunk_elements_;
}

}  // namespace ringside

#include "worker/strategies/ps/ps_session.h"

#include <glog/logging.h>

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"

namespace ringside {

PsSession::PsSession(const SyncContext& context, bool overlap,
                     const PsSessionJob& job)
    : context_(context), overlap_(overlap), job_(job) {}

PsSession::~PsSession() { Abort(); }

absl::StatusOr<std::unique_ptr<PsSession>> PsSession::Start(
    const SyncContext& context, bool overlap, const PsSessionJob& job) {
  RS_RETURN_IF_ERROR(context.options.Validate());
  if (context.options.servers.empty()) {
    return absl::InvalidArgumentError(
        "no parameter servers given (--servers=host:port[,...])");
  }
  std::unique_ptr<PsSession> session(new PsSession(context, overlap, job));
  RS_RETURN_IF_ERROR(session->Connect());
  return session;
}

absl::Status PsSession::Connect() {
  const SyncOptions& options = context_.options;
  const int k = static_cast<int>(options.servers.size());
  const PsOptions& ps = options.strategy.Get<PsOptions>();
  RS_ASSIGN_OR_RETURN(std::unique_ptr<Partitioner> partitioner,
                      MakePartitioner(ps.partitioner));
  RS_ASSIGN_OR_RETURN(ranges_, partitioner->Partition(context_.layout, k));

  // Chunks of every server, and which tensors overlap each.
  const int64_t chunk_bytes =
      ps.chunk_bytes > 0
          ? ps.chunk_bytes
          : AutoChunkBytes(context_.layout.total_bytes(), k);
  const int64_t chunk_elements = chunk_bytes / 4;
  chunks_per_server_.assign(k, 0);
  for (int s = 0; s < k; ++s) {
    for (const KeyRange& r : ChunkRange(ranges_[s], chunk_elements)) {
      chunks_.push_back({s, r, 0});
      ++chunks_per_server_[s];
    }
  }
  tensor_chunks_.assign(context_.layout.num_tensors(), {});
  for (int t = 0; t < context_.layout.num_tensors(); ++t) {
    const TensorSpec& spec = context_.layout.tensor(t);
    for (size_t c = 0; c < chunks_.size(); ++c) {
      if (chunks_[c].range.begin < spec.offset + spec.size &&
          spec.offset < chunks_[c].range.end) {
        tensor_chunks_[t].push_back(static_cast<int>(c));
        ++chunks_[c].num_tensors;
      }
    }
  }

  proto::RegisterRequest request;
  request.set_rank(context_.rank);
  request.set_world_size(context_.world_size);
  *request.mutable_layout() = context_.layout.ToProto();
  *request.mutable_optimizer() = context_.optimizer.ToProto();
  request.set_chunk_bytes(chunk_bytes);
  request.set_num_shards(k);
  request.set_partitioner(ps.partitioner);
  request.set_summation(job_.summation);
  request.set_ranks_per_pusher(job_.ranks_per_pusher);
  request.set_start_step(job_.start_step);

  const absl::Time connect_deadline = absl::Now() + options.connect_timeout;
  for (int s = 0; s < k; ++s) {
    servers_.push_back(
        std::make_unique<PsShardClient>(options.servers[s], options.security));
  }
  if (ps.transport == "tcp" && options.security.tls) {
    return absl::InvalidArgumentError(
        "--ps_transport=tcp with TLS: the bulk data path authenticates with "
        "the job's token but does not encrypt; use --ps_transport=grpc, "
        "which carries TLS");
  }
  std::vector<int64_t> resume_steps;
  for (int s = 0; s < k; ++s) {
    RS_ASSIGN_OR_RETURN(Registered registered,
                        servers_[s]->Register(request, connect_deadline));
    const KeyRange range = registered.range;
    if (ps.transport == "tcp") {
      if (registered.bulk_port <= 0) {
        return absl::FailedPreconditionError(absl::StrCat(
            "--ps_transport=tcp: parameter server ", servers_[s]->address(),
            " offers no bulk data path (started with --bulk_port=-1 or with "
            "TLS)"));
      }
      BulkEndpoint endpoint;
      endpoint.host = servers_[s]->host();
      endpoint.port = registered.bulk_port;
      endpoint.rank = context_.rank;
      endpoint.shard = registered.shard;
      endpoint.auth_token = options.security.auth_token;
      endpoint.range = range;
      endpoint.max_chunk_elements = chunk_elements;
      RS_RETURN_IF_ERROR(
          servers_[s]->UseBulkPath(endpoint, connect_deadline));
    }
    resume_steps.push_back(registered.resume_step);
    if (!(range == ranges_[s])) {
      return absl::FailedPreconditionError(absl::StrCat(
          "parameter server ", servers_[s]->address(), " owns [", range.begin,
          ", ", range.end, ") but this worker expects shard ", s, " to own [",
          ranges_[s].begin, ", ", ranges_[s].end,
          "): are --servers listed in shard order?"));
    }
  }
  for (int s = 1; s < k; ++s) {
    if (resume_steps[s] != resume_steps[0]) {
      return absl::FailedPreconditionError(absl::StrCat(
          "parameter servers disagree on where the job resumes: ",
          servers_[0]->address(), " at step ", resume_steps[0], ", ",
          servers_[s]->address(), " at step ", resume_steps[s],
          " (-1: fresh start); restart them all from one checkpoint set"));
    }
  }
  start_step_ = job_.summation ? job_.start_step
                               : std::max<int64_t>(resume_steps[0], 0);
  step_ = start_step_;
  const absl::Time deadline = absl::Now() + options.rpc_timeout;
  if (!job_.summation && context_.rank == 0 && resume_steps[0] < 0) {
    for (int s = 0; s < k; ++s) {
      std::vector<KeyRange> mine;
      for (const Chunk& c : chunks_) {
        if (c.server == s) mine.push_back(c.range);
      }
      RS_RETURN_IF_ERROR(
          servers_[s]->PushInit(0, mine, context_.params, deadline));
    }
  }
  for (int s = 0; s < k && !job_.summation; ++s) {
    RS_RETURN_IF_ERROR(servers_[s]
                           ->Pull(context_.rank, start_step_,
                                  chunks_per_server_[s],
                                  context_.params, deadline)
                           .status());
  }
  pending_.resize(chunks_.size());
  for (int s = 0; s < k; ++s) {
    first_chunk_.push_back(
        s == 0 ? 0 : first_chunk_[s - 1] + chunks_per_server_[s - 1]);
    push_lanes_.push_back(absl::StrCat("shard ", s, " push"));
    pull_lanes_.push_back(absl::StrCat("shard ", s, " pull"));
    pushers_.push_back(std::make_unique<TaskThread>());
    pullers_.push_back(std::make_unique<TaskThread>());
  }
  tensor_ready_s_.assign(context_.layout.num_tensors(), -1.0);
  chunk_pushed_s_.assign(chunks_.size(), -1.0);
  chunk_pulled_s_.assign(chunks_.size(), -1.0);
  return absl::OkStatus();
}

void PsSession::BeginStep(int64_t step) {
  in_step_ = true;
  step_ = step;
  for (size_t c = 0; c < chunks_.size(); ++c) {
    pending_[c] = chunks_[c].num_tensors;
  }
  if (context_.options.timeline != nullptr) {
    std::fill(tensor_ready_s_.begin(), tensor_ready_s_.end(), -1.0);
    std::fill(chunk_pushed_s_.begin(), chunk_pushed_s_.end(), -1.0);
    std::fill(chunk_pulled_s_.begin(), chunk_pulled_s_.end(), -1.0);
  }
  // Every entry exists before any thread starts: the threads get their own
  // ServerStep and never read step_state_, which must not change under them.
  step_state_.clear();
  for (int s = 0; s < num_servers(); ++s) {
    step_state_.push_back(std::make_unique<ServerStep>());
  }
  for (int s = 0; s < num_servers(); ++s) {
    ServerStep* state = step_state_[s].get();
    pullers_[s]->Run([this, s, step, state] { PullLoop(s, step + 1, *state); });
    pushers_[s]->Run([this, s, step, state] { PushLoop(s, step, *state); });
  }
}

void PsSession::Enqueue(int chunk) {
  PushQueue& q = step_state_[chunks_[chunk].server]->queue;
  absl::MutexLock lock(&q.mu);
  q.chunks.push_back(chunk);
}

void PsSession::OnGradientReady(int tensor_index) {
  if (!overlap_) return;
  if (!in_step_) BeginStep(step_);
  if (context_.options.timeline != nullptr) {
    tensor_ready_s_[tensor_index] = NowSeconds();
  }
  for (int c : tensor_chunks_[tensor_index]) {
    if (--pending_[c] == 0) Enqueue(c);
  }
}

void PsSession::PushLoop(int server, int64_t step, ServerStep& state) {
  Timeline* const timeline = context_.options.timeline;
  const absl::Time deadline = absl::Now() + context_.options.rpc_timeout;
  std::unique_ptr<PsShardClient::PushStream> stream =
      servers_[server]->OpenPush(context_.rank, step, deadline);
  absl::Status status;
  while (true) {
    int chunk = -1;
    {
      PushQueue& q = state.queue;
      absl::MutexLock lock(&q.mu);
      auto has_work = [&q]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(q.mu) {
        return !q.chunks.empty() || q.closed;
      };
      // The stream is dead by its deadline anyway; FinishStep closes the
      // queue well before unless the training thread is stuck.
      if (!q.mu.AwaitWithDeadline(absl::Condition(&has_work), deadline)) {
        if (status.ok()) {
          status = absl::DeadlineExceededError(absl::StrCat(
              "push of step ", step, " to parameter server ",
              servers_[server]->address(), ": the step's chunks were not "
              "all handed over within the RPC deadline"));
        }
        break;
      }
      if (q.chunks.empty()) break;  // closed and drained
      chunk = q.chunks.front();
      q.chunks.pop_front();
    }
    if (!status.ok()) continue;  // drain after an error
    const KeyRange& range = chunks_[chunk].range;
    const double write_start = timeline ? NowSeconds() : 0.0;
    status = stream->Write(range, context_.grads);
    if (!status.ok()) continue;
    state.bytes_sent += range.size() * 4;
    if (timeline != nullptr) {
      const double written = NowSeconds();
      chunk_pushed_s_[chunk] = written;
      timeline->Span(push_lanes_[server], "PUSH_CHUNK", write_start, written,
                     {{"step", step},
                      {"chunk", chunk - first_chunk_[server]},
                      {"offset", range.begin},
                      {"bytes", range.size() * 4}});
    }
  }
  const double close_start = timeline ? NowSeconds() : 0.0;
  absl::Status closed = stream->Close();
  if (timeline != nullptr) {
    timeline->Span(push_lanes_[server], "PUSH_ACK", close_start, NowSeconds(),
                   {{"step", step}});
  }
  state.push_status = status.ok() ? closed : status;
  if (!state.push_status.ok()) servers_[server]->CancelPull();
}

std::pair<int, int> PsSession::ChunksIn(int server, int64_t offset,
                                        int64_t elements) const {
  const auto first = chunks_.begin() + first_chunk_[server];
  const auto last = first + chunks_per_server_[server];
  const auto begin = std::partition_point(
      first, last, [offset](const Chunk& c) { return c.range.end <= offset; });
  const auto end =
      std::partition_point(begin, last, [offset, elements](const Chunk& c) {
        return c.range.begin < offset + elements;
      });
  return {static_cast<int>(begin - chunks_.begin()),
          static_cast<int>(end - chunks_.begin())};
}

void PsSession::PullLoop(int server, int64_t version, ServerStep& state) {
  Timeline* const timeline = context_.options.timeline;
  PsShardClient::ChunkInPlaceFn on_chunk;
  double previous = 0.0;
  if (timeline != nullptr) {
    state.pull_start_s = previous = NowSeconds();
    on_chunk = [this, timeline, server, version, &previous](int64_t offset,
                                                            int64_t elements) {
      const double now = NowSeconds();
      const auto [begin, end] = ChunksIn(server, offset, elements);
      for (int c = begin; c < end; ++c) chunk_pulled_s_[c] = now;
      timeline->Span(pull_lanes_[server], "PULL_CHUNK", previous, now,
                     {{"step", version - 1},
                      {"version", version},
                      {"chunk", begin - first_chunk_[server]},
                      {"offset", offset},
                      {"bytes", elements * 4}});
      previous = now;
    };
  }
  absl::StatusOr<int64_t> bytes = servers_[server]->Pull(
      context_.rank, version, chunks_per_server_[server], context_.params,
      absl::Now() + context_.options.rpc_timeout, on_chunk);
  if (bytes.ok()) {
    state.bytes_received = *bytes;
  } else {
    state.pull_status = bytes.status();
  }
}

absl::StatusOr<StepStats> PsSession::FinishStep(int64_t step) {
  if (!in_step_) BeginStep(step);
  if (step != step_) {
    return absl::InternalError(
        absl::StrCat("FinishStep(", step, ") during step ", step_));
  }
  if (!overlap_) {
    if (context_.options.timeline != nullptr) {
      std::fill(tensor_ready_s_.begin(), tensor_ready_s_.end(), NowSeconds());
    }
    // Last layer first, as backward produced them.
    for (int c = static_cast<int>(chunks_.size()) - 1; c >= 0; --c) {
      Enqueue(c);
    }
  }
  for (auto& s : step_state_) {
    absl::MutexLock lock(&s->queue.mu);
    s->queue.closed = true;
  }
  StepStats stats;
  absl::Status first_error;
  for (size_t i = 0; i < step_state_.size(); ++i) {
    pushers_[i]->Wait();
    if (first_error.ok()) first_error = step_state_[i]->push_status;
  }
  for (size_t i = 0; i < step_state_.size(); ++i) {
    pullers_[i]->Wait();
    const std::unique_ptr<ServerStep>& s = step_state_[i];
    if (first_error.ok() && !absl::IsCancelled(s->pull_status)) {
      first_error = s->pull_status;
    }
    stats.bytes_sent += s->bytes_sent;
    stats.bytes_received += s->bytes_received;
  }
  RecordTensorSpans(step);
  step_state_.clear();
  in_step_ = false;
  step_ = step + 1;
  if (!first_error.ok()) return first_error;
  return stats;
}

void PsSession::RecordTensorSpans(int64_t step) {
  Timeline* const timeline = context_.options.timeline;
  if (timeline == nullptr) return;
  for (int t = 0; t < context_.layout.num_tensors(); ++t) {
    const std::vector<int>& chunks = tensor_chunks_[t];
    if (chunks.empty()) continue;
    double pushed = -1.0, pulled = -1.0;
    double requested = std::numeric_limits<double>::infinity();
    bool all_pushed = true, all_pulled = true;
    for (int c : chunks) {
      all_pushed = all_pushed && chunk_pushed_s_[c] >= 0.0;
      all_pulled = all_pulled && chunk_pulled_s_[c] >= 0.0;
      pushed = std::max(pushed, chunk_pushed_s_[c]);
      pulled = std::max(pulled, chunk_pulled_s_[c]);
      requested =
          std::min(requested, step_state_[chunks_[c].server]->pull_start_s);
    }
    const TensorSpec& spec = context_.layout.tensor(t);
    const int64_t bytes = spec.size * 4;
    if (all_pushed && tensor_ready_s_[t] >= 0.0) {
      timeline->Span(spec.name, "PUSH", tensor_ready_s_[t], pushed,
                     {{"step", step}, {"bytes", bytes}});
    }
    if (all_pulled && requested >= 0.0) {
      timeline->Span(spec.name, "PULL", requested, pulled,
                     {{"step", step}, {"version", step + 1}, {"bytes", bytes}});
    }
  }
}

absl::Status PsSession::UseBuffers(absl::Span<float> params,
                                   absl::Span<float> grads) {
  const int64_t n = context_.layout.total_elements();
  if (in_step_) {
    return absl::FailedPreconditionError(
        absl::StrCat("PsSession::UseBuffers during step ", step_));
  }
  if (static_cast<int64_t>(params.size()) != n ||
      static_cast<int64_t>(grads.size()) != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PsSession::UseBuffers: params has ", params.size(), " and grads ",
        grads.size(), " elements; the layout has ", n));
  }
  context_.params = params;
  context_.grads = grads;
  return absl::OkStatus();
}

void PsSession::Abort() {
  for (auto& s : step_state_) {
    absl::MutexLock lock(&s->queue.mu);
    s->queue.closed = true;
  }
  for (size_t i = 0; i < step_state_.size(); ++i) {
    pushers_[i]->Wait();
    if (pullers_[i]->busy()) {
      servers_[i]->CancelPull();
      pullers_[i]->Wait();
    }
  }
  step_state_.clear();
  in_step_ = false;
}

absl::Status PsSession::Shutdown() {
  Abort();
  const absl::Time deadline = absl::Now() + context_.options.rpc_timeout;
  absl::Status first_error;
  for (auto& server : servers_) {
    absl::Status s = server->Finish(context_.rank, deadline);
    if (first_error.ok()) first_error = s;
  }
  return first_error;
}

}  // namespace ringside

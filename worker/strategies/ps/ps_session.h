// PsSession: a worker's side of a parameter-server job over K >= 1 servers,
// shared by the sps and dps strategies (ps-lite's KV worker picture).
//
// The flat buffer is partitioned into K key ranges (Partitioner) and each
// range into chunks. Per step t, every chunk's gradient is pushed to its
// owner; the owner averages the N pushes, steps the optimizer and serves
// version t+1, which a concurrent pull per server writes into params as each
// chunk becomes ready. With `overlap`, a chunk is pushed as soon as every
// tensor it touches has reported its gradient (OnGradientReady); otherwise
// all chunks are pushed when backward ends.
//
// Timeline (SyncOptions::timeline, when set), per step:
//   - on each tensor's lane, PUSH from when the session may push it
//     (OnGradientReady with overlap, FinishStep without) until the last
//     chunk holding it is written to its push stream, and PULL from the
//     request of version t+1 until the last chunk holding it is in params;
//   - on lane "shard K push", PUSH_CHUNK per chunk written (args: chunk,
//     offset, bytes) and PUSH_ACK for closing the stream (server reply);
//   - on lane "shard K pull", PULL_CHUNK per chunk received: from the
//     previous chunk (or the request) until this one is in params.
// Per-tensor spans are derived from per-chunk times, which each server's
// threads write for their own chunks only; they are emitted after the
// threads are done. With no timeline the clock is not read.
//
// One push thread and one pull thread per server, started by Start and kept
// (TaskThread); each step hands them its push and pull. Not thread-safe:
// call from the worker's training thread only (the SyncStrategy contract).
#ifndef RINGSIDE_WORKER_STRATEGIES_PS_PS_SESSION_H_
#define RINGSIDE_WORKER_STRATEGIES_PS_PS_SESSION_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/task_thread.h"
#include "core/ps_chunks.h"
#include "server/partitioner.h"
#include "worker/strategies/ps/ps_options.h"
#include "worker/strategies/ps/ps_shard_client.h"
#include "worker/sync_strategy.h"

namespace ringside {

// The chunk size when PsOptions::chunk_bytes is 0: AutoChunkBytes
// (core/ps_chunks.h, which the cost model shares).

// What a session registers with its servers. An optimizing job (sps, dps,
// async_ps; the default): the servers step the optimizer, rank 0 sends the
// initial parameters and Start pulls version 0 into context.params. A
// summation job (byteps; server/param_shard.h): the servers only sum; the
// session's rank is its host's pushing rank (context.rank: the host's
// index, context.world_size: the job's workers), each standing for
// ranks_per_pusher workers; nothing is sent or pulled at Start, training
// starts at start_step, and step t's pull writes the sum of every host's
// step-t gradients into context.params.
struct PsSessionJob {
  bool summation = false;
  int ranks_per_pusher = 1;
  int64_t start_step = 0;
};

class PsSession {
 public:
  // Connects to every server, registers, has rank 0 send the initial
  // parameters, and pulls version 0 into context.params. Blocking, bounded
  // by context.options.connect_timeout and rpc_timeout.
  static absl::StatusOr<std::unique_ptr<PsSession>> Start(
      const SyncContext& context, bool overlap,
      const PsSessionJob& job = PsSessionJob());
  ~PsSession();

  // Pushes the chunks that became complete with tensor i (overlap only).
  // Calls of one step may come from another thread than FinishStep's (a
  // communication thread) when it finished them before FinishStep began.
  void OnGradientReady(int tensor_index);
  // Pushes what is left, waits for every push and for the pull of version
  // step+1. Blocking, bounded by rpc_timeout.
  absl::StatusOr<StepStats> FinishStep(int64_t step);
  // The final record's ps_chunk_bytes (the chunk flag's value; 0:
  // AutoChunkBytes) and ps_transport (what the pushes and pulls ran over:
  // "tcp" once the bulk path is connected, else "grpc").
  nlohmann::json RecordFields() const {
    return {{"ps_chunk_bytes",
             context_.options.strategy.Get<PsOptions>().chunk_bytes},
            {"ps_transport",
             !servers_.empty() && servers_[0]->bulk() ? "tcp" : "grpc"}};
  }
  // Tells every server this worker is done. A step still in flight is
  // abandoned first (as Abort).
  absl::Status Shutdown();
  // Abandons a step still in flight (an early error between
  // OnGradientReady and FinishStep): its pushes closed, its pulls
  // cancelled, its threads waited for, so nothing writes params or reads grads
  // once it returns. Tells the servers nothing.
  void Abort();
  // Between steps: the next steps push `grads` and pull into `params`
  // instead of the spans Start was given (each the layout's size; every
  // element of `params` is overwritten by a pull). Lets a caller hand
  // buffers over instead of copying into the session's (async_ps).
  absl::Status UseBuffers(absl::Span<float> params, absl::Span<float> grads);

  int num_servers() const { return static_cast<int>(servers_.size()); }
  // The step training starts at: 0, or the servers' checkpoint step when
  // they resumed (then context.params hold that version after Start).
  int64_t start_step() const { return start_step_; }

 private:
  struct Chunk {
    int server = 0;
    KeyRange range;
    int num_tensors = 0;  // tensors overlapping this chunk
  };
  // A closable queue of chunk indices for one server's push thread.
  struct PushQueue {
    absl::Mutex mu;
    std::deque<int> chunks ABSL_GUARDED_BY(mu);
    bool closed ABSL_GUARDED_BY(mu) = false;
  };
  struct ServerStep {
    PushQueue queue;
    absl::Status push_status, pull_status;
    int64_t bytes_sent = 0, bytes_received = 0;
    double pull_start_s = -1.0;  // timeline only: when the pull was requested
  };

  PsSession(const SyncContext& context, bool overlap, const PsSessionJob& job);
  int64_t start_step_ = 0;
  absl::Status Connect();
  void BeginStep(int64_t step);
  void Enqueue(int chunk);
  void PushLoop(int server, int64_t step, ServerStep& state);
  void PullLoop(int server, int64_t version, ServerStep& state);
  // The chunks of `server` overlapping [offset, offset + elements).
  std::pair<int, int> ChunksIn(int server, int64_t offset,
                               int64_t elements) const;
  // Emits the per-tensor PUSH/PULL spans of the step (threads done).
  void RecordTensorSpans(int64_t step);

  SyncContext context_;
  bool overlap_;
  PsSessionJob job_;
  std::vector<std::unique_ptr<PsShardClient>> servers_;
  std::vector<KeyRange> ranges_;  // per server
  std::vector<Chunk> chunks_;     // all servers, in order
  std::vector<int> chunks_per_server_;
  std::vector<std::vector<int>> tensor_chunks_;  // tensor -> chunks
  std::vector<int> pending_;                     // per chunk, this step
  std::vector<int> first_chunk_;                 // per server

  // Timeline only. Lane names per server; per-step times (NowSeconds(), -1
  // when not yet): tensor_ready_s_ written by the training thread,
  // chunk_pushed_s_/chunk_pulled_s_ by the chunk's own server's threads
  // (distinct elements), read after they are done.
  std::vector<std::string> push_lanes_, pull_lanes_;
  std::vector<double> tensor_ready_s_;
  std::vector<double> chunk_pushed_s_;
  std::vector<double> chunk_pulled_s_;

  bool in_step_ = false;
  int64_t step_ = 0;
  std::vector<std::unique_ptr<ServerStep>> step_state_;
  // Per server, the threads that run each step's PushLoop and PullLoop
  // (made by Connect); declared last, so destroyed first (Abort has waited
  // for them).
  std::vector<std::unique_ptr<TaskThread>> pushers_, pullers_;
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_PS_PS_SESSION_H_

// BytepsStrategy ("byteps"): BytePS's design (Jiang et al., OSDI 2020) on
// ringside's parameter servers. The N ranks sit on H hosts of L ranks each
// (L = --local_size, ResolveLocalSize in hierarchical_options.h): host h
// holds ranks [h*L, (h+1)*L), and its local rank 0 is the host's root.
//   1. Per bucket of adjacent gradient tensors (ring's buckets,
//      --ring_first_bucket_kb, --ring_bucket_kb), as backward makes its
//      last tensor final, a communication thread reduces the bucket within
//      the host to the root (LOCAL_REDUCE: a reduce-scatter whose one shard
//      is the root's);
//   2. the root pushes each parameter-server chunk (--chunk_kb) whose
//      tensors are all reduced to the chunk's summation server, one copy
//      per host: the servers (K of them, SyncOptions::servers in shard
//      order, byte-balanced key ranges) only sum, as BytePS's summation
//      service does (a summation job, server/param_shard.h), and the root
//      pulls the sum of every host's step-t gradients (PUSH, PULL);
//   3. the root divides by N and broadcasts the result within the host
//      (LOCAL_BROADCAST), and every rank applies the optimizer itself.
// All ranks hold bit-identical parameters. The servers keep no state
// between steps beyond the sums they serve; checkpoints and resume are
// ring's (rank 0 writes, every rank resumes through the roots and the
// hosts' broadcasts), and the servers start fresh at the resumed step.
//
// Groups (Gloo on CPU, through the job's store): "byteps/local/<h>" (the L
// ranks of host h) and, for Init only, "byteps/roots" (the H roots), over
// which rank 0's initial parameters (and a resumed checkpoint) reach every
// root before each host's broadcast. Servers are started for the job's N
// workers (ps_server --num_workers=N); each is told at registration that
// each pushing rank stands for L of them.
//
// Traffic (StepStats, per rank): the root's pushes and pulls as sent and
// received; the host's reduce and broadcast counted as a chain, the bucket
// once out of every rank but the root in the reduce and once into every
// rank but the root in the broadcast (L − 1 copies each way within a host).
//
// Timeline: per tensor lane QUEUE, then its bucket's LOCAL_REDUCE; on the
// root PsSession's PUSH and PULL (and its per-server chunk lanes); then
// LOCAL_BROADCAST on lane "step" and OPTIMIZER.
// Not thread-safe (SyncStrategy contract); owns one communication thread.
#ifndef RINGSIDE_WORKER_STRATEGIES_PS_BYTEPS_STRATEGY_H_
#define RINGSIDE_WORKER_STRATEGIES_PS_BYTEPS_STRATEGY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collectives/collective.h"
#include "collectives/in_memory_store.h"
#include "worker/strategies/allreduce/local_optimizer.h"
#include "worker/strategies/comm/bucket_comm_thread.h"
#include "worker/strategies/ps/ps_session.h"
#include "worker/sync_strategy.h"

namespace ringside {

class BytepsStrategy : public SyncStrategy {
 public:
  ~BytepsStrategy() override;
  std::string name() const override { return "byteps"; }
  absl::Status Init(const SyncContext& context) override;
  void OnGradientReady(int tensor_index) override;
  absl::StatusOr<StepStats> FinishStep(int64_t step) override;
  absl::Status Shutdown() override;
  absl::Status Abort() override;
  // "<hosts>×<ranks per host>", e.g. "2×4".
  std::string Variant() const override;
  int64_t start_step() const override { return start_step_; }
  int64_t OptimizerStateBytes() const override {
    return optimizer_ == nullptr ? 0 : optimizer_->state_bytes();
  }
  // Ring's bucket caps, the chunk and the transport of the pushes, the
  // hosts and the ranks per host.
  nlohmann::json RecordFields() const override;

  int local_size() const { return local_size_; }
  int num_hosts() const { return num_hosts_; }

 private:
  bool is_root() const { return local_rank_ == 0; }
  // Step 1 for `bucket` and, on the root, its chunks handed to the session
  // (comm thread).
  absl::Status ReduceBucket(const GradientBucket& bucket, int64_t step);

  SyncContext context_;
  int local_size_ = 1;  // L
  int num_hosts_ = 1;   // H
  int host_ = 0;
  int local_rank_ = 0;
  std::unique_ptr<InMemoryStore> own_store_;  // single-worker jobs only
  std::unique_ptr<Collective> local_;         // this host's L ranks
  std::unique_ptr<LocalOptimizer> optimizer_;
  int64_t start_step_ = 0;
  // The root's: the sums it pulls, and its session with the servers.
  std::vector<float> sums_;
  std::unique_ptr<PsSession> session_;
  std::unique_ptr<BucketCommThread> comm_;  // last: stops first
};

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGIES_PS_BYTEPS_STRATEGY_H_

#include "worker/worker_liveness.h"

#include <glog/logging.h>

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "collectives/grpc_store.h"
#include "worker/strategies/ps/ps_shard_client.h"

namespace ringside {
namespace {

// The store's peer id (ranks are 0..N-1).
constexpr int kStorePeer = -1;

class StoreHeartbeats : public HeartbeatSource {
 public:
  StoreHeartbeats(Store* store, std::unique_ptr<Store> owned, int rank,
                  int world_size, std::string store_name)
      : owned_(std::move(owned)),
        store_(store != nullptr ? store : owned_.get()),
        rank_(rank),
        world_size_(world_size),
        store_name_(std::move(store_name)),
        last_counter_(world_size, -1) {}

  absl::Status Beat(int64_t step, absl::Time now,
                    PeerTracker& peers) override {
    if (rank_ != 0) peers.Track(kStorePeer, store_name_, now);
    const absl::Status set =
        store_->Set(StoreHeartbeatKey(rank_), absl::StrCat(++counter_, " ", step));
    if (!set.ok()) {
      // The other ranks cannot be observed meanwhile: their silence does
      // not count, only the store's.
      peers.Excuse(kStorePeer, now);
      return absl::OkStatus();
    }
    peers.Seen(kStorePeer, now);
    for (int r = 0; r < world_size_; ++r) {
      if (r == rank_) continue;
      // Once training is under way every rank was alive (they all joined
      // the collective): watch each even if its heartbeat was never read.
      if (step > 0) peers.Track(r, absl::StrCat("rank ", r), now);
      absl::StatusOr<std::string> value =
          store_->Get(StoreHeartbeatKey(r), absl::ZeroDuration());
      if (!value.ok()) continue;  // not started yet, or a hiccup: no news
      const std::vector<std::string> parts =
          absl::StrSplit(*value, ' ', absl::SkipEmpty());
      int64_t counter = 0, their_step = -1;
      if (parts.size() != 2 || !absl::SimpleAtoi(parts[1], &their_step)) {
        continue;
      }
      if (parts[0] == "done") {
        peers.Forget(r);
        continue;
      }
      if (!absl::SimpleAtoi(parts[0], &counter)) continue;
      peers.Track(r, absl::StrCat("rank ", r), now);
      if (counter != last_counter_[r]) {
        last_counter_[r] = counter;
        peers.Seen(r, now, their_step);
      }
    }
    return absl::OkStatus();
  }

  void Finish(int64_t step) override {
    absl::Status s =
        store_->Set(StoreHeartbeatKey(rank_), absl::StrCat("done ", step));
    if (!s.ok()) LOG(WARNING) << "rank " << rank_ << ": " << s;
  }

 private:
  std::unique_ptr<Store> owned_;
  Store* const store_;
  const int rank_;
  const int world_size_;
  const std::string store_name_;
  int64_t counter_ = 0;
  std::vector<int64_t> last_counter_;  // per rank, as last read
};

class ServerHeartbeats : public HeartbeatSource {
 public:
  ServerHeartbeats(const std::vector<HostPort>& servers, int rank,
                   absl::Duration rpc_deadline, const GrpcSecurity& security)
      : rank_(rank), rpc_deadline_(rpc_deadline) {
    for (size_t s = 0; s < servers.size(); ++s) {
      clients_.push_back(std::make_unique<PsShardClient>(servers[s], security));
      names_.push_back(absl::StrCat("parameter server shard ", s, " (",
                                    servers[s].ToString(), ")"));
    }
  }

  absl::Status Beat(int64_t step, absl::Time now,
                    PeerTracker& peers) override {
    for (size_t s = 0; s < clients_.size(); ++s) {
      // Once training is under way every server has answered (Register):
      // watch each even if no heartbeat reply came yet.
      if (step > 0) peers.Track(static_cast<int>(s), names_[s], now);
      absl::StatusOr<std::string> failure = clients_[s]->Heartbeat(
          rank_, step, absl::Now() + rpc_deadline_);
      if (!failure.ok()) continue;  // its silence grows
      peers.Track(static_cast<int>(s), names_[s], now);
      peers.Seen(static_cast<int>(s), now);
      if (!failure->empty()) {
        return absl::UnavailableError(
            absl::StrCat(names_[s], " failed the job: ", *failure,
                         " (this worker at step ", step, ")"));
      }
    }
    return absl::OkStatus();
  }

 private:
  const int rank_;
  const absl::Duration rpc_deadline_;
  std::vector<std::unique_ptr<PsShardClient>> clients_;
  std::vector<std::string> names_;
};

}  // namespace

std::string StoreHeartbeatKey(int rank) {
  return absl::StrCat("liveness/", rank);
}

std::unique_ptr<HeartbeatSource> MakeStoreHeartbeats(
    Store* store, std::unique_ptr<Store> owned, int rank, int world_size,
    std::string store_name) {
  return std::make_unique<StoreHeartbeats>(store, std::move(owned), rank,
                                           world_size, std::move(store_name));
}

std::unique_ptr<HeartbeatSource> MakeServerHeartbeats(
    const std::vector<HostPort>& servers, int rank,
    absl::Duration rpc_deadline, const GrpcSecurity& security) {
  return std::make_unique<ServerHeartbeats>(servers, rank, rpc_deadline,
                                            security);
}

absl::StatusOr<std::unique_ptr<LivenessMonitor>> StartWorkerLiveness(
    const WorkerLivenessOptions& options) {
  LivenessOptions liveness;
  liveness.failure_timeout = options.failure_timeout;
  liveness.exit_after_verdict = options.exit_after_verdict;
  if (absl::Status s = liveness.Validate(); !s.ok()) return s;
  const absl::Duration period = liveness.EffectivePeriod();
  const int rank = options.rank;
  std::unique_ptr<HeartbeatSource> source;
  if (options.use_store) {
    if (options.world_size < 2) return nullptr;
    liveness.self = "this rank";
    const std::string name =
        absl::StrCat("rank 0's store (", options.master.ToString(), ")");
    if (rank == 0) {
      if (options.local_store == nullptr) {
        return absl::InvalidArgumentError("rank 0 needs its local store");
      }
      source = MakeStoreHeartbeats(options.local_store, nullptr, rank,
                                   options.world_size, name);
    } else {
      GrpcStoreOptions store_options;
      store_options.connect_timeout = options.failure_timeout;
      store_options.rpc_timeout = period;
      store_options.security = options.security;
      absl::StatusOr<std::unique_ptr<GrpcStore>> store =
          GrpcStore::Connect(options.master, store_options);
      if (!store.ok()) return store.status();
      source = MakeStoreHeartbeats(nullptr, *std::move(store), rank,
                                   options.world_size, name);
    }
  } else {
    if (options.servers.empty()) return nullptr;
    liveness.self = "this worker";
    source =
        MakeServerHeartbeats(options.servers, rank, period, options.security);
  }
  liveness.on_verdict = [rank](const std::string& verdict) {
    LOG(ERROR) << "rank " << rank << ": " << verdict;
  };
  return LivenessMonitor::Start(std::move(liveness), std::move(source));
}

}  // namespace ringside

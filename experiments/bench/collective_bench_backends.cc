#include "experiments/bench/collective_bench_backends.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "collectives/gloo_collective.h"
#include "collectives/gloo_device.h"
#include "collectives/gloo_error.h"
#include "collectives/in_memory_store.h"
#include "common/status_macros.h"
#include "experiments/job/process_group.h"
#include "gloo/allgatherv.h"
#include "gloo/allreduce.h"
#include "gloo/barrier.h"
#include "gloo/math.h"
#include "gloo/rendezvous/context.h"
#include "gloo/rendezvous/hash_store.h"
#include "gloo/transport/tcp/device.h"

namespace ringside {
namespace {

// Hands the ranks of one sweep the same fresh store: every `ranks`
// consecutive connect calls form one sweep (sweeps of one backend never
// overlap, see the harness).
template <typename StoreT>
class StorePerSweep {
 public:
  std::shared_ptr<StoreT> Join(int ranks) {
    absl::MutexLock lock(&mu_);
    if (joins_ % ranks == 0) current_ = std::make_shared<StoreT>();
    ++joins_;
    return current_;
  }

 private:
  absl::Mutex mu_;
  int64_t joins_ ABSL_GUARDED_BY(mu_) = 0;
  std::shared_ptr<StoreT> current_ ABSL_GUARDED_BY(mu_);
};

class CollectiveRankComm final : public HostRankComm {
 public:
  CollectiveRankComm(std::unique_ptr<Collective> collective,
                     absl::Duration timeout)
      : collective_(std::move(collective)), timeout_(timeout) {}

  absl::Status Barrier() override { return collective_->Barrier(timeout_); }

 protected:
  absl::Status AllReduceInPlace(absl::Span<float> data) override {
    return collective_->AllReduce(data, ReduceOp::kSum, timeout_);
  }
  absl::Status ShardedInPlace(BenchOp op, absl::Span<float> data) override {
    const std::vector<int64_t> shards =
        BalancedShards(data.size(), collective_->size());
    if (op == BenchOp::kReduceScatter) {
      return collective_->ReduceScatter(data, shards, ReduceOp::kSum, timeout_);
    }
    return collective_->AllGatherV(data, shards, timeout_);
  }

 private:
  std::unique_ptr<Collective> collective_;
  const absl::Duration timeout_;
};

std::chrono::milliseconds Millis(absl::Duration d) {
  return std::chrono::milliseconds(absl::ToInt64Milliseconds(d));
}

// Raw Gloo, as a Gloo user writes it: no wrapper between the harness and
// gloo::allreduce.
class RawGlooRankComm final : public HostRankComm {
 public:
  RawGlooRankComm(std::shared_ptr<gloo::rendezvous::Context> context,
                  absl::Duration timeout)
      : context_(std::move(context)), timeout_(Millis(timeout)) {}

  absl::Status Barrier() override {
    const uint32_t tag = tag_++;
    return RS_GLOO_CALL("gloo::barrier", {
      gloo::BarrierOptions opts(context_);
      opts.setTag(tag);
      opts.setTimeout(timeout_);
      gloo::barrier(opts);
    });
  }

 protected:
  absl::Status AllReduceInPlace(absl::Span<float> data) override {
    const uint32_t tag = tag_++;
    return RS_GLOO_CALL("gloo::allreduce", {
      gloo::AllreduceOptions opts(context_);
      opts.setOutput(data.data(), data.size());
      opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
      opts.setReduceFunction(
          static_cast<void (*)(void*, const void*, const void*, size_t)>(
              &gloo::sum<float>));
      opts.setTag(tag);
      opts.setTimeout(timeout_);
      gloo::allreduce(opts);
    });
  }
  // gloo::allgatherv in place (Gloo's reduce-scatter has no options API:
  // raw Gloo runs allreduce and allgatherv only).
  absl::Status ShardedInPlace(BenchOp op, absl::Span<float> data) override {
    if (op != BenchOp::kAllGatherV) {
      return HostRankComm::ShardedInPlace(op, data);
    }
    const std::vector<int64_t> shards =
        BalancedShards(data.size(), context_->size);
    const uint32_t tag = tag_++;
    return RS_GLOO_CALL("gloo::allgatherv", {
      gloo::AllgathervOptions opts(context_);
      opts.setOutput(data.data(),
                     std::vector<size_t>(shards.begin(), shards.end()));
      opts.setTag(tag);
      opts.setTimeout(timeout_);
      gloo::allgatherv(opts);
    });
  }

 private:
  std::shared_ptr<gloo::rendezvous::Context> context_;
  const std::chrono::milliseconds timeout_;
  uint32_t tag_ = 0;
};

SweepResult RunMpi(const BenchBackendOptions& options, int ranks,
                   const std::vector<SizePlan>& plan) {
  SweepResult result;
  if (options.mpi_peer.empty()) {
    result.status = absl::NotFoundError("no mpi_allreduce_peer binary given");
    return result;
  }
  ProcessGroupOptions group_options;
  group_options.deadline = options.mpi_deadline;
  ProcessGroup group(group_options);
  absl::Status parse_error;
  ChildSpec spec;
  spec.label = "mpirun";
  spec.argv = MpirunArgv(options, ranks, plan);
  spec.on_stdout_line = [&](const std::string& label, absl::string_view line) {
    if (!absl::StartsWith(line, "{")) {  // mpirun's own chatter
      std::fprintf(stderr, "[%s] %.*s\n", label.c_str(),
                   static_cast<int>(line.size()), line.data());
      return;
    }
    absl::StatusOr<SizeMeasurement> m = ParseSizeLine(std::string(line));
    if (m.ok()) {
      result.sizes.push_back(*m);
    } else if (parse_error.ok()) {
      parse_error = m.status();
    }
  };
  absl::StatusOr<int> started = group.Start(std::move(spec));
  if (!started.ok()) {
    result.status = started.status();
    return result;
  }
  absl::Status waited = group.Wait();
  if (!waited.ok()) {
    result.status = waited;
  } else if (!parse_error.ok()) {
    result.status = parse_error;
  } else if (result.sizes.size() != plan.size()) {
    result.status = absl::InternalError(
        absl::StrCat("mpirun exited 0 but the peer reported ",
                     result.sizes.size(), " of ", plan.size(), " sizes"));
  }
  return result;
}

}  // namespace

std::vector<std::string> KnownBackendNames() { return {"ours", "gloo", "mpi"}; }

absl::StatusOr<AllReduceBackend> MakeBackend(
    const std::string& name, const BenchBackendOptions& options) {
  if (name == "ours") return MakeOursBackend(options);
  if (name == "gloo") return MakeRawGlooBackend(options);
  if (name == "mpi") return MakeMpiBackend(options);
  // Extension point: `if (name == "nccl") return MakeNcclBackend(options);`
  // in a CUDA build (see the header), and "nccl" in KnownBackendNames().
  return absl::InvalidArgumentError(
      absl::StrCat("unknown backend '", name,
                   "'; known: ", absl::StrJoin(KnownBackendNames(), ",")));
}

AllReduceBackend MakeCollectiveBackend(std::string name,
                                       std::string description,
                                       CollectiveFactory create,
                                       const BenchBackendOptions& options) {
  auto stores = std::make_shared<StorePerSweep<InMemoryStore>>();
  const absl::Duration timeout = options.op_timeout;
  AllReduceBackend b;
  b.name = std::move(name);
  b.description = std::move(description);
  b.connect = [stores, create, timeout](
                  int rank,
                  int ranks) -> absl::StatusOr<std::unique_ptr<RankComm>> {
    std::shared_ptr<InMemoryStore> store = stores->Join(ranks);
    RS_ASSIGN_OR_RETURN(std::unique_ptr<Collective> c,
                        create(*store, rank, ranks));
    return std::unique_ptr<RankComm>(
        new CollectiveRankComm(std::move(c), timeout));
  };
  b.ops = {BenchOp::kAllReduce, BenchOp::kReduceScatter, BenchOp::kAllGatherV};
  return b;
}

AllReduceBackend MakeOursBackend(const BenchBackendOptions& options) {
  GlooCollectiveOptions gloo;
  gloo.host = options.host;
  gloo.algorithm = "ring";
  gloo.connect_timeout = options.connect_timeout;
  gloo.store_prefix = "collective_bench";
  gloo.event_loop = options.gloo_event_loop;
  return MakeCollectiveBackend(
      "ours",
      "ringside Collective (CreateGlooCollective, ring), threads over an "
      "InMemoryStore",
      [gloo](Store& store, int rank, int ranks) {
        return CreateGlooCollective(store, rank, ranks, gloo);
      },
      options);
}

AllReduceBackend MakeRawGlooBackend(const BenchBackendOptions& options) {
  auto stores = std::make_shared<StorePerSweep<gloo::rendezvous::HashStore>>();
  AllReduceBackend b;
  b.name = "gloo";
  b.description =
      "raw Gloo (rendezvous::Context + tcp device, gloo::allreduce RING, "
      "gloo::allgatherv), threads over a HashStore, its event loop "
      "scheduled as ours";
  b.connect = [stores, options](
                  int rank,
                  int ranks) -> absl::StatusOr<std::unique_ptr<RankComm>> {
    std::shared_ptr<gloo::rendezvous::HashStore> store = stores->Join(ranks);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, ranks);
    // The device as ours makes it: the same event-loop scheduling.
    RS_ASSIGN_OR_RETURN(
        std::shared_ptr<gloo::transport::Device> device,
        CreateGlooTcpDevice(options.host, "", options.gloo_event_loop,
                            "raw gloo"));
    RS_RETURN_IF_ERROR(RS_GLOO_CALL("gloo connectFullMesh", {
      context->setTimeout(Millis(options.connect_timeout));
      context->connectFullMesh(*store, device);
    }));
    return std::unique_ptr<RankComm>(
        new RawGlooRankComm(std::move(context), options.op_timeout));
  };
  b.ops = {BenchOp::kAllReduce, BenchOp::kAllGatherV};
  return b;
}

std::vector<std::string> MpirunArgv(const BenchBackendOptions& options,
                                    int ranks,
                                    const std::vector<SizePlan>& plan) {
  // --oversubscribe: more ranks than cores is allowed (and expected on small
  // hosts); --allow-run-as-root: mpirun refuses to start as root otherwise
  // (containers), and is harmless for other users.
  std::vector<std::string> argv = {options.mpirun, "--oversubscribe",
                                   "--allow-run-as-root", "-np",
                                   absl::StrCat(ranks)};
  argv.insert(argv.end(), options.mpirun_args.begin(),
              options.mpirun_args.end());
  argv.push_back(options.mpi_peer);
  for (std::string& flag : PlanToFlags(plan)) argv.push_back(std::move(flag));
  return argv;
}

AllReduceBackend MakeMpiBackend(const BenchBackendOptions& options) {
  AllReduceBackend b;
  b.name = "mpi";
  b.description =
      "Open MPI MPI_Allreduce (MPI_IN_PLACE, MPI_SUM), mpirun processes";
  b.run_plan = [options](int ranks, const std::vector<SizePlan>& plan) {
    return RunMpi(options, ranks, plan);
  };
  return b;
}

}  // namespace ringside

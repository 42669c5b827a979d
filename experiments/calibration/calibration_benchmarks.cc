#include "experiments/calibration/calibration_benchmarks.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/barrier.h"
#include "collectives/gloo_collective.h"
#include "collectives/gloo_half_allreduce.h"
#include "collectives/in_memory_store.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "core/tensor_layout.h"
#include "server/local_ps_cluster.h"
#include "worker/strategies/ps/local_ps_worker.h"
#include "worker/strategies/ps/ps_options.h"
#include "worker/strategies/ps/ps_session.h"
#include "worker/strategies/allreduce/gather_kernels.h"
#include "worker/strategies/allreduce/powersgd_kernels.h"
#include "worker/sync_strategy.h"

namespace ringside {
namespace calibration_bench {
namespace {

// The typical time of a timed call made by every rank (`seconds`: per
// rank, per call, the same number of calls): per call the slowest rank's
// time, then after busy starts the mean (a step pays every call's
// disturbance); after quiet starts, for a small buffer the fastest call
// (one preemption doubles a call that short, so the least disturbed call
// is its cost), else the median.
double TypicalOfSlowest(const std::vector<std::vector<double>>& seconds,
                        int64_t bytes, CallStart start = CallStart{}) {
  std::vector<double> slowest(seconds.front().size(), 0);
  for (const std::vector<double>& rank : seconds) {
    for (size_t i = 0; i < slowest.size(); ++i) {
      slowest[i] = std::max(slowest[i], rank[i]);
    }
  }
  if (start.busy) {
    return std::accumulate(slowest.begin(), slowest.end(), 0.0) /
           static_cast<double>(slowest.size());
  }
  std::sort(slowest.begin(), slowest.end());
  return bytes <= kSmallBytes ? slowest.front() : slowest[slowest.size() / 2];
}

// Calls per timing, each after one untimed call: more for small buffers,
// and more from busy starts, whose mean needs them (at least 5), than
// from quiet ones, whose fastest call or median does (at least 3). A small
// call's busy-start mean sets the wake-up: its calls stall for 1-3 ms at
// random, and with 30 calls the wake-up ranged 1.3-4.0 ms over 13
// calibrations of one morning.
int CallsFor(int64_t bytes, CallStart start) {
  if (start.busy) {
    return bytes <= kSmallBytes ? 80 : (bytes <= (int64_t{16} << 20) ? 20 : 5);
  }
  return bytes <= kSmallBytes ? 15 : (bytes <= (int64_t{16} << 20) ? 7 : 3);
}

// One rank's part of a timed collective: connects (collective, blocking)
// and returns the call to time.
using RankCall = std::function<absl::Status()>;
using RankSetup =
    std::function<absl::StatusOr<RankCall>(InMemoryStore& store, int rank)>;

// Times the calls `setup` makes between kRanks ranks (threads) on `bytes`
// in one group (one connect): the TypicalOfSlowest of CallsFor(bytes,
// start) calls, each after one untimed call, every rank starting each
// call together, as `start` says.
absl::StatusOr<double> TimeRanksInOneGroup(const RankSetup& setup,
                                           int64_t bytes, CallStart start) {
  const int calls = CallsFor(bytes, start);
  InMemoryStore store;
  std::vector<std::vector<double>> seconds(kRanks);
  std::vector<absl::Status> status(kRanks);
  std::vector<std::unique_ptr<absl::Barrier>> rounds;
  for (int i = 0; i < calls + 1; ++i) {
    rounds.push_back(std::make_unique<absl::Barrier>(kRanks));
  }
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      absl::StatusOr<RankCall> call = setup(store, r);
      if (!call.ok()) status[r] = call.status();
      for (int i = 0; i < calls + 1; ++i) {
        rounds[i]->Block();
        if (!status[r].ok()) continue;
        if (start.busy) SpinFor(start.busy_s);
        const Stopwatch watch;
        status[r] = (*call)();
        if (i > 0) seconds[r].push_back(watch.ElapsedSeconds());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const absl::Status& s : status) RS_RETURN_IF_ERROR(s);
  return TypicalOfSlowest(seconds, bytes, start);
}

// Quiet timings run in this many groups, each connected afresh.
constexpr int kQuietGroups = 4;

// TimeRanksInOneGroup; from quiet starts, over kQuietGroups groups, each
// connected afresh: a group's quiet calls run alike, and groups differ.
// For a small buffer the fastest group (its fixed cost): on the 2-core VM
// one group in about six took 3.0–3.9 ms for every one of its 15 quiet
// 64 KiB all-reduces, where the others took 0.17–0.26 ms, and a ring
// step's fixed cost came out 1.9 ms instead of about 0.1. For a big one
// the mean of the groups (what a run's group is, typically): a 4.5 MB
// all-reduce's median call took 2.5–2.9 ms in some groups and 3.9–4.5 in
// others, the all-gather's 1.0–1.1 or 2.5–3.9 (six calibrations, two
// groups each), and with two groups the mean still ranged 3.0–5.5 ms over
// six calibrations back to back.
absl::StatusOr<double> TimeRanks(const RankSetup& setup, int64_t bytes,
                                 CallStart start) {
  if (start.busy) return TimeRanksInOneGroup(setup, bytes, start);
  std::vector<double> groups;
  for (int g = 0; g < kQuietGroups; ++g) {
    RS_ASSIGN_OR_RETURN(const double seconds,
                        TimeRanksInOneGroup(setup, bytes, start));
    groups.push_back(seconds);
  }
  return bytes <= kSmallBytes
             ? *std::min_element(groups.begin(), groups.end())
             : std::accumulate(groups.begin(), groups.end(), 0.0) /
                   static_cast<double>(groups.size());
}

// `count` processes forked to keep cores busy as a training step's compute
// does, a memory-streaming loop over 2 × 8 MiB (y = 0.999·y + x, which
// leaves little in the caches), until this object ends (SIGKILL, reaped).
// Their CPU time is not this process's. The buffers are allocated before
// the fork: the children call nothing that takes a lock.
class ComputeStandIns {
 public:
  explicit ComputeStandIns(int count) {
    if (count <= 0) return;
    x_.assign(size_t{2} << 20, 1.0f);
    y_.assign(size_t{2} << 20, 2.0f);
    for (int i = 0; i < count; ++i) {
      const pid_t pid = fork();
      if (pid == 0) Stream();  // never returns
      if (pid > 0) children_.push_back(pid);
    }
  }
  ~ComputeStandIns() {
    for (pid_t pid : children_) kill(pid, SIGKILL);
    for (pid_t pid : children_) waitpid(pid, nullptr, 0);
  }
  ComputeStandIns(const ComputeStandIns&) = delete;
  ComputeStandIns& operator=(const ComputeStandIns&) = delete;

 private:
  [[noreturn]] void Stream() {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // gone with the calibration
    float* x = x_.data();
    float* y = y_.data();
    const size_t n = x_.size();
    while (true) {
      for (size_t i = 0; i < n; ++i) y[i] = 0.999f * y[i] + x[i];
      std::swap(x, y);
    }
  }

  std::vector<float> x_, y_;
  std::vector<pid_t> children_;
};

constexpr int kPsClusters = 2;
constexpr int kCopyRounds = 7;
constexpr int kConvertRounds = 7;
constexpr int kLowRankRounds = 7;
constexpr int kGatherRounds = 7;

}  // namespace

absl::StatusOr<double> TimeCollective(const CollectiveOp& op, int64_t floats,
                                      CallStart start, absl::Duration timeout) {
  const std::vector<int64_t> counts = EvenShardCounts(floats, kRanks);
  return TimeRanks(
      [&](InMemoryStore& store, int rank) -> absl::StatusOr<RankCall> {
        GlooCollectiveOptions options;
        options.connect_timeout = timeout;
        options.store_prefix = "calibration";
        RS_ASSIGN_OR_RETURN(std::shared_ptr<Collective> group,
                            CreateGlooCollective(store, rank, kRanks, options));
        auto data = std::make_shared<std::vector<float>>(
            static_cast<size_t>(floats), 1.0f + rank);
        return RankCall(
            [=, &op] { return op(*group, absl::MakeSpan(*data), counts); });
      },
      floats * 4, start);
}

absl::StatusOr<double> TimeHalfAllReduce(int64_t floats, CallStart start,
                                         absl::Duration timeout) {
  return TimeRanks(
      [&](InMemoryStore& store, int rank) -> absl::StatusOr<RankCall> {
        GlooCollectiveOptions options;
        options.connect_timeout = timeout;
        options.store_prefix = "calibration/half";
        RS_ASSIGN_OR_RETURN(
            std::shared_ptr<GlooHalfAllReduce> group,
            GlooHalfAllReduce::Create(store, rank, kRanks, options));
        auto data = std::make_shared<std::vector<float>>(
            static_cast<size_t>(floats), 0.5f + rank);
        auto halves = std::make_shared<std::vector<uint16_t>>(
            static_cast<size_t>(floats));
        return RankCall([=] {
          FloatToHalf(*data, absl::MakeSpan(*halves));
          RS_RETURN_IF_ERROR(
              group->AllReduceSum(absl::MakeSpan(*halves), timeout));
          HalfToFloat(*halves, absl::MakeSpan(*data));
          return absl::OkStatus();
        });
      },
      floats * 2, start);
}

absl::StatusOr<PsRound> TimePsRound(int servers, int workers, int64_t bytes,
                                    int64_t tensors, absl::Duration timeout,
                                    int busy, const std::string& transport) {
  const int64_t floats = std::max<int64_t>(bytes / 4, tensors);
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
  for (int64_t i = 0; i < tensors; ++i) {
    shapes.push_back({absl::StrCat("t", i),
                      {floats / tensors + (i < floats % tensors ? 1 : 0)}});
  }
  RS_ASSIGN_OR_RETURN(const TensorLayout layout,
                      TensorLayout::FromShapes(shapes));
  RS_ASSIGN_OR_RETURN(std::unique_ptr<LocalPsCluster> cluster,
                      LocalPsCluster::Start(servers, workers, timeout));
  // Every worker's push is needed for each pull: the rounds start quiet.
  const int rounds = CallsFor(bytes, CallStart{});
  std::vector<std::vector<double>> seconds(workers);
  std::vector<absl::Status> status(workers);
  double cpu_start = 0, cpu_end = 0;  // rank 0's marks
  const ComputeStandIns compute(busy);
  std::vector<std::thread> threads;
  for (int r = 0; r < workers; ++r) {
    threads.emplace_back([&, r] {
      SyncOptions options;
      options.rpc_timeout = timeout;
      options.connect_timeout = timeout;
      options.servers = cluster->addresses();
      PsOptions ps;
      ps.transport = transport;
      options.strategy.Set(ps);
      absl::StatusOr<std::unique_ptr<LocalPsWorker>> worker =
          LocalPsWorker::Start(layout, r, workers, options, OptimizerConfig{});
      if (!worker.ok()) {
        status[r] = worker.status();
        return;
      }
      PsSession& session = (*worker)->session();
      // Every worker's push is needed for each pull, so the rounds keep
      // the workers in step by themselves.
      for (int i = 0; i < rounds + 1 && status[r].ok(); ++i) {
        const Stopwatch watch;
        absl::StatusOr<StepStats> step = session.FinishStep(i);
        if (!step.ok()) status[r] = step.status();
        if (i > 0) seconds[r].push_back(watch.ElapsedSeconds());
        if (r == 0 && i == 0) cpu_start = ProcessCpuSeconds();
        if (r == 0 && i == rounds) cpu_end = ProcessCpuSeconds();
      }
      const absl::Status done = session.Shutdown();
      if (status[r].ok()) status[r] = done;
    });
  }
  for (std::thread& t : threads) t.join();
  for (const absl::Status& s : status) RS_RETURN_IF_ERROR(s);
  return PsRound{TypicalOfSlowest(seconds, bytes),
                 std::max(0.0, cpu_end - cpu_start) / rounds};
}

absl::StatusOr<double> TimeFastestPsRound(int servers, int workers,
                                          int64_t bytes, int64_t tensors,
                                          absl::Duration timeout,
                                          const std::string& transport) {
  double fastest = 0;
  for (int i = 0; i < kPsClusters; ++i) {
    RS_ASSIGN_OR_RETURN(const PsRound round,
                        TimePsRound(servers, workers, bytes, tensors, timeout,
                                    /*busy=*/0, transport));
    fastest = i == 0 ? round.wall_s : std::min(fastest, round.wall_s);
  }
  return fastest;
}

double TimeCopy(int64_t bytes) {
  std::vector<char> from(static_cast<size_t>(bytes), 1),
      to(static_cast<size_t>(bytes), 2);
  std::vector<double> seconds;
  for (int i = 0; i < kCopyRounds; ++i) {
    from[static_cast<size_t>(i)] = static_cast<char>(i);
    const Stopwatch watch;
    std::memcpy(to.data(), from.data(), from.size());
    seconds.push_back(watch.ElapsedSeconds());
  }
  return Median(seconds) / static_cast<double>(bytes);
}

double TimeHalfConversions(int64_t floats) {
  std::vector<float> data(static_cast<size_t>(floats), 0.5f);
  std::vector<uint16_t> halves(static_cast<size_t>(floats));
  std::vector<double> seconds;
  for (int i = 0; i < kConvertRounds; ++i) {
    const Stopwatch watch;
    FloatToHalf(data, absl::MakeSpan(halves));
    HalfToFloat(halves, absl::MakeSpan(data));
    seconds.push_back(watch.ElapsedSeconds());
  }
  return Median(seconds);
}

LowRankTimes TimeLowRankCompression(
    const std::vector<std::vector<int64_t>>& shapes, int64_t rank,
    int64_t max_elements) {
  std::vector<std::pair<int64_t, int64_t>> matrices;  // (rows, cols)
  int64_t total = 0;
  for (const std::vector<int64_t>& shape : shapes) {
    if (shape.size() < 2) continue;
    int64_t elements = 1;
    for (int64_t d : shape) elements *= d;
    if (total + elements > max_elements) continue;
    matrices.emplace_back(shape[0], elements / shape[0]);
    total += elements;
  }
  if (matrices.empty()) {
    const int64_t side = std::max<int64_t>(
        1, static_cast<int64_t>(std::sqrt(static_cast<double>(max_elements))));
    matrices.emplace_back(side, side);
  }
  LowRankTimes t;
  t.rank = rank;
  RowMajorMatrix scratch;
  for (const auto& [rows, cols] : matrices) {
    const int64_t r = std::max<int64_t>(1, std::min({rank, rows, cols}));
    const RowMajorMatrix start = RowMajorMatrix::Random(rows, cols);
    RowMajorMatrix m(rows, cols), error = RowMajorMatrix::Zero(rows, cols);
    const absl::Span<float> mv(m.data(), static_cast<size_t>(m.size()));
    const absl::Span<float> ev(error.data(), static_cast<size_t>(m.size()));
    RowMajorMatrix p(rows, r), q = RowMajorMatrix::Random(cols, r);
    RowMajorMap mm(m.data(), rows, cols), pm(p.data(), rows, r),
        qm(q.data(), cols, r);
    std::vector<double> products, feedback;
    for (int i = 0; i < kLowRankRounds; ++i) {
      m = start;
      Stopwatch watch;
      AddError(mv, ev);
      feedback.push_back(watch.ElapsedSeconds());
      watch.Reset();
      LowRankProject(mm, qm, pm);
      LowRankBackProject(mm, pm, qm, scratch);
      LowRankReconstruct(pm, qm, mm);
      products.push_back(watch.ElapsedSeconds());
      watch.Reset();
      TakeResult(mv, ev);
      feedback.back() += watch.ElapsedSeconds();
      q /= std::max(1.0f, q.norm());  // bounded from round to round
    }
    ++t.matrices;
    t.multiply_adds += 3.0 * static_cast<double>(rows) *
                       static_cast<double>(cols) * static_cast<double>(r);
    t.elements += static_cast<double>(rows) * static_cast<double>(cols);
    t.products_s += Median(products);
    t.feedback_s += Median(feedback);
  }
  return t;
}

GatherCompressionTimes TimeGatherCompression(
    const std::vector<std::vector<int64_t>>& shapes, int64_t tensors,
    int64_t max_elements, double topk_ratio) {
  std::vector<int64_t> parts;
  int64_t total = 0;
  for (const std::vector<int64_t>& shape : shapes) {
    int64_t elements = 1;
    for (int64_t d : shape) elements *= d;
    if (total + elements > max_elements) continue;
    parts.push_back(elements);
    total += elements;
  }
  if (parts.empty()) {
    const int64_t t = std::max<int64_t>(1, tensors);
    parts.assign(static_cast<size_t>(t), std::max<int64_t>(1, max_elements / t));
    total = parts[0] * t;
  }
  std::vector<float> grads(static_cast<size_t>(total)), error(grads.size(), 0);
  // Gradient-like values: distinct, continuous (ties would make the
  // selection faster than on real gradients).
  std::mt19937_64 engine(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& v : grads) v = normal(engine);
  int64_t pairs = 0, words = 0;
  for (int64_t size : parts) {
    pairs += std::min<int64_t>(
        size, std::max<int64_t>(1, static_cast<int64_t>(std::ceil(
                                       topk_ratio * static_cast<double>(size)))));
    words += SignWords(size);
  }
  std::vector<float> send(static_cast<size_t>(2 * pairs)),
      message(static_cast<size_t>(words)), out(grads.size(), 0);
  std::vector<float> magnitude;
  std::vector<double> topk, pack, add;
  for (int i = 0; i < kGatherRounds; ++i) {
    Stopwatch watch;
    for (size_t j = 0; j < grads.size(); ++j) error[j] += grads[j];
    float* at = send.data();
    int64_t begin = 0;
    for (int64_t size : parts) {
      const int64_t k = std::min<int64_t>(
          size, std::max<int64_t>(1, static_cast<int64_t>(std::ceil(
                                         topk_ratio * static_cast<double>(size)))));
      SelectTopK(error.data() + begin, begin, size, k, magnitude, at);
      at += 2 * k;
      begin += size;
    }
    for (size_t j = 0; j < send.size(); j += 2) {
      error[static_cast<size_t>(FloatAsIndex(send[j]))] = 0.0f;
    }
    topk.push_back(watch.ElapsedSeconds());
    watch.Reset();
    float* word = message.data();
    begin = 0;
    for (int64_t size : parts) {
      PackSigns(grads.data() + begin, size, error.data() + begin, word);
      word += SignWords(size);
      begin += size;
    }
    pack.push_back(watch.ElapsedSeconds());
    watch.Reset();
    word = message.data();
    begin = 0;
    for (int64_t size : parts) {
      AddSigns(word, size, out.data() + begin);
      word += SignWords(size);
      begin += size;
    }
    add.push_back(watch.ElapsedSeconds());
  }
  GatherCompressionTimes t;
  t.elements = static_cast<double>(total);
  t.topk_s = Median(topk);
  t.sign_pack_s = Median(pack);
  t.sign_add_s = Median(add);
  return t;
}

}  // namespace calibration_bench
}  // namespace ringside

// FusionRuntime with N ranks as threads over Gloo and an in-memory store
// (Gloo's own test picture). Rank r's gradient of tensor t at step s,
// element i, is G(r, s, t, i); after each step every rank must hold the
// average over ranks, whatever order each rank submitted its tensors in,
// with or without fusion, the fusion buffer or the response cache.
#include "collectives/fusion/fusion_runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "collectives/fusion/fusion_memory.h"
#include "collectives/gloo_collective.h"
#include "collectives/in_memory_store.h"
#include "common/timeline.h"
#include "tests/testing/rank_threads.h"

namespace ringside {
namespace {

using ::ringside::testing::ExpectAllOk;
using ::ringside::testing::RunRanks;

float G(int r, int s, int t, int64_t i) {
  return r * 100.0f + s * 10.0f + t + (i % 5) * 0.25f;
}
float Average(int n, int s, int t, int64_t i) {
  float sum = 0;
  for (int r = 0; r < n; ++r) sum += G(r, s, t, i);
  return sum / n;
}

TensorLayout Layout() {
  return *TensorLayout::FromShapes({{"fc2.bias", {3}},
                                    {"fc2.weight", {50}},
                                    {"fc1.bias", {7}},
                                    {"fc1.weight", {1000}},
                                    {"emb.bias", {5}},
                                    {"emb.weight", {20}}});
}

std::vector<std::unique_ptr<Collective>> MakeGroup(InMemoryStore& store,
                                                   int size,
                                                   const std::string& prefix) {
  std::vector<std::unique_ptr<Collective>> group(size);
  GlooCollectiveOptions options;
  options.connect_timeout = absl::Seconds(20);
  options.store_prefix = prefix;
  ExpectAllOk(RunRanks(size, [&](int r) -> absl::Status {
    absl::StatusOr<std::unique_ptr<Collective>> c =
        CreateGlooCollective(store, r, size, options);
    if (!c.ok()) return c.status();
    group[r] = *std::move(c);
    return absl::OkStatus();
  }));
  return group;
}

struct Case {
  std::string name;
  int ranks;
  int64_t threshold_bytes;
  bool in_place;
  int cache_capacity;
  bool overlap = false;  // a second data collective: two lanes
};

class FusionRuntimeOrderTest : public ::testing::TestWithParam<Case> {};

// Each rank submits its tensors in its own shuffled order, with small
// pauses, for several steps; every rank ends each step with the averages.
TEST_P(FusionRuntimeOrderTest, RanksSubmittingInDifferentOrdersAgree) {
  const Case& c = GetParam();
  const TensorLayout layout = Layout();
  const int steps = 4, n = layout.num_tensors();
  InMemoryStore store;
  auto control = MakeGroup(store, c.ranks, "ctl");
  auto data = MakeGroup(store, c.ranks, "data");
  std::vector<std::unique_ptr<Collective>> data2;
  if (c.overlap) data2 = MakeGroup(store, c.ranks, "data2");
  std::vector<FusionStats> stats(c.ranks);
  ExpectAllOk(RunRanks(c.ranks, [&](int r) -> absl::Status {
    std::vector<float> grads(layout.total_elements());
    FusionOptions options;
    options.fusion_threshold_bytes = c.threshold_bytes;
    options.in_place_contiguous = c.in_place;
    options.cache_capacity = c.cache_capacity;
    options.timeout = absl::Seconds(20);
    absl::StatusOr<std::unique_ptr<FusionRuntime>> runtime =
        FusionRuntime::Start(control[r].get(), data[r].get(), layout,
                             absl::MakeSpan(grads), options,
                             /*memory=*/nullptr,
                             c.overlap ? data2[r].get() : nullptr);
    if (!runtime.ok()) return runtime.status();
    std::mt19937 rng(1234 + r);
    for (int s = 0; s < steps; ++s) {
      std::vector<int> order(n);
      for (int t = 0; t < n; ++t) order[t] = t;
      std::shuffle(order.begin(), order.end(), rng);
      for (int t : order) {
        absl::Span<float> view = layout.View(t, absl::MakeSpan(grads));
        for (size_t i = 0; i < view.size(); ++i) view[i] = G(r, s, t, i);
        (*runtime)->Enqueue(t);
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % 1500));
      }
      absl::Status w = (*runtime)->WaitForReduced(n, absl::Seconds(20));
      if (!w.ok()) return w;
      for (int t = 0; t < n; ++t) {
        absl::Span<const float> view =
            layout.View(t, absl::MakeConstSpan(grads));
        for (size_t i = 0; i < view.size(); ++i) {
          const float want = Average(c.ranks, s, t, i);
          if (std::abs(view[i] - want) > 1e-5f * std::max(1.0f, want)) {
            return absl::InternalError(
                absl::StrCat("step ", s, " tensor ", layout.tensor(t).name,
                             "[", i, "] = ", view[i], ", want ", want));
          }
        }
      }
    }
    absl::Status shut = (*runtime)->Shutdown();
    stats[r] = (*runtime)->stats();
    return shut;
  }));
  for (int r = 0; r < c.ranks; ++r) {
    const int64_t cached = std::min(c.cache_capacity, n);
    EXPECT_EQ(stats[r].cache_hits, cached * (steps - 1)) << "rank " << r;
    EXPECT_EQ(stats[r].cache_misses, steps * n - cached * (steps - 1))
        << "rank " << r;
    EXPECT_GE(stats[r].batches, 1);
    if (c.threshold_bytes == 0) {  // fusion off: per tensor, never copied
      EXPECT_EQ(stats[r].batches, steps * n);
      EXPECT_EQ(stats[r].bytes_copied, 0);
    }
    if (!c.in_place && c.threshold_bytes > 0) {
      EXPECT_GT(stats[r].bytes_copied, 0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    FusionCacheAndBuffer, FusionRuntimeOrderTest,
    ::testing::Values(Case{"defaults_2ranks", 2, 64 << 20, true, 1024},
                      Case{"defaults_3ranks", 3, 64 << 20, true, 1024},
                      Case{"no_cache", 3, 64 << 20, true, 0},
                      Case{"cache_of_2", 2, 64 << 20, true, 2},
                      Case{"fusion_off", 2, 0, true, 1024},
                      Case{"buffer_copies", 3, 64 << 20, false, 1024},
                      // fc1.weight (4000 B) is larger than the buffer.
                      Case{"small_buffer", 2, 256, false, 1024},
                      Case{"two_lanes_fusion_off", 3, 0, true, 1024, true},
                      Case{"two_lanes_small_buffer", 2, 256, false, 1024,
                           true}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

// With a second data collective, a cycle's batches go out two at a time:
// a long cycle collects every tensor of a step into one cycle, so fusion
// off (6 batches) and a 256-byte buffer with copies (3 batches) both use
// the second lane, and every average is exact.
TEST(FusionRuntimeTest, TwoLanesReduceEveryBatchOfACycle) {
  const TensorLayout layout = Layout();
  const int ranks = 3, steps = 3, n = layout.num_tensors();
  for (const int64_t threshold : {int64_t{0}, int64_t{256}}) {
    SCOPED_TRACE(absl::StrCat("threshold ", threshold));
    InMemoryStore store;
    auto control = MakeGroup(store, ranks, "ctl");
    auto data = MakeGroup(store, ranks, "data");
    auto data2 = MakeGroup(store, ranks, "data2");
    std::vector<FusionStats> stats(ranks);
    ExpectAllOk(RunRanks(ranks, [&](int r) -> absl::Status {
      std::vector<float> grads(layout.total_elements());
      FusionOptions options;
      options.fusion_threshold_bytes = threshold;
      options.in_place_contiguous = threshold == 0;
      options.cycle_time = absl::Milliseconds(150);
      options.timeout = absl::Seconds(20);
      absl::StatusOr<std::unique_ptr<FusionRuntime>> runtime =
          FusionRuntime::Start(control[r].get(), data[r].get(), layout,
                               absl::MakeSpan(grads), options, nullptr,
                               data2[r].get());
      if (!runtime.ok()) return runtime.status();
      for (int s = 0; s < steps; ++s) {
        for (int t = n - 1; t >= 0; --t) {
          absl::Span<float> view = layout.View(t, absl::MakeSpan(grads));
          for (size_t i = 0; i < view.size(); ++i) view[i] = G(r, s, t, i);
          (*runtime)->Enqueue(t);
        }
        if (absl::Status w = (*runtime)->WaitForReduced(n, absl::Seconds(20));
            !w.ok()) {
          return w;
        }
        for (int t = 0; t < n; ++t) {
          absl::Span<const float> view =
              layout.View(t, absl::MakeConstSpan(grads));
          for (size_t i = 0; i < view.size(); ++i) {
            if (std::abs(view[i] - Average(ranks, s, t, i)) > 1e-3f) {
              return absl::InternalError(absl::StrCat(
                  "step ", s, " ", layout.tensor(t).name, "[", i, "] = ",
                  view[i], ", want ", Average(ranks, s, t, i)));
            }
          }
        }
      }
      absl::Status shut = (*runtime)->Shutdown();
      stats[r] = (*runtime)->stats();
      return shut;
    }));
    for (int r = 0; r < ranks; ++r) {
      // Fusion off: 6 batches per cycle, 3 on each lane. 256 bytes:
      // fc2.* + fc1.bias (240 B), fc1.weight alone, emb.* = 3 batches, the
      // second on the second lane.
      const int64_t per_step = threshold == 0 ? 6 : 3;
      EXPECT_EQ(stats[r].batches, steps * per_step) << "rank " << r;
      EXPECT_EQ(stats[r].second_lane_batches, steps * (per_step / 2))
          << "rank " << r;
    }
  }
}

TEST(FusionRuntimeTest, RefusesAnOverlapCollectiveThatIsTheDataOne) {
  const TensorLayout layout = Layout();
  InMemoryStore store;
  auto group = MakeGroup(store, 1, "one");
  std::vector<float> grads(layout.total_elements());
  absl::StatusOr<std::unique_ptr<FusionRuntime>> runtime =
      FusionRuntime::Start(group[0].get(), group[0].get(), layout,
                           absl::MakeSpan(grads), FusionOptions(), nullptr,
                           group[0].get());
  EXPECT_EQ(runtime.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(runtime.status().message().find("overlap"), std::string::npos)
      << runtime.status();
}

// A tensor some ranks submitted and others not is reported on rank 0,
// naming the missing rank: on the request path (step 0) and on the cached
// path (step 1).
TEST(FusionRuntimeTest, StallsNameTheMissingRank) {
  const TensorLayout layout = Layout();
  const int n = layout.num_tensors();
  InMemoryStore store;
  auto group = MakeGroup(store, 2, "g");
  absl::Mutex mu;
  std::vector<std::vector<StallReport>> per_step(2);
  int step_of_rank0 = 0;
  ExpectAllOk(RunRanks(2, [&](int r) -> absl::Status {
    std::vector<float> grads(layout.total_elements(), 1.0f);
    FusionOptions options;
    options.stall_warning = absl::Milliseconds(40);
    options.timeout = absl::Seconds(20);
    options.on_stall = [&](const StallReport& report) {
      absl::MutexLock lock(&mu);
      per_step[step_of_rank0].push_back(report);
    };
    auto runtime = FusionRuntime::Start(group[r].get(), group[r].get(), layout,
                                        absl::MakeSpan(grads), options);
    if (!runtime.ok()) return runtime.status();
    for (int s = 0; s < 2; ++s) {
      if (r == 1) std::this_thread::sleep_for(std::chrono::milliseconds(300));
      for (int t = 0; t < n; ++t) (*runtime)->Enqueue(t);
      absl::Status w = (*runtime)->WaitForReduced(n, absl::Seconds(20));
      if (!w.ok()) return w;
      if (r == 0 && s == 0) {
        // Rank 1 cannot start step 1 before rank 0's step 0 is reduced.
        absl::MutexLock lock(&mu);
        step_of_rank0 = 1;
      }
    }
    return (*runtime)->Shutdown();
  }));
  for (int s = 0; s < 2; ++s) {
    ASSERT_FALSE(per_step[s].empty()) << "no stall reported in step " << s;
    for (const StallReport& report : per_step[s]) {
      EXPECT_EQ(report.missing_ranks, std::vector<int>{1}) << report.ToString();
      EXPECT_EQ(report.submitted_ranks, std::vector<int>{0});
    }
  }
}

TEST(FusionRuntimeTest, DifferentLayoutsAreRefused) {
  InMemoryStore store;
  auto group = MakeGroup(store, 2, "g");
  const std::vector<absl::Status> status =
      RunRanks(2, [&](int r) -> absl::Status {
        const TensorLayout layout =
            r == 0 ? Layout() : *TensorLayout::FromShapes({{"w", {4}}});
        std::vector<float> grads(layout.total_elements());
        FusionOptions options;
        options.timeout = absl::Seconds(20);
        return FusionRuntime::Start(group[r].get(), group[r].get(), layout,
                                    absl::MakeSpan(grads), options)
            .status();
      });
  for (const absl::Status& s : status) {
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_NE(s.message().find("rank 1's tensor layout differs"),
              std::string::npos)
        << s;
  }
}

TEST(FusionRuntimeTest, WaitingForATensorNobodyElseSubmitsTimesOut) {
  const TensorLayout layout = Layout();
  InMemoryStore store;
  auto group = MakeGroup(store, 2, "g");
  ExpectAllOk(RunRanks(2, [&](int r) -> absl::Status {
    std::vector<float> grads(layout.total_elements());
    FusionOptions options;
    options.timeout = absl::Seconds(20);
    auto runtime = FusionRuntime::Start(group[r].get(), group[r].get(), layout,
                                        absl::MakeSpan(grads), options);
    if (!runtime.ok()) return runtime.status();
    if (r == 0) {
      (*runtime)->Enqueue(0);
      absl::Status w =
          (*runtime)->WaitForReduced(1, absl::Milliseconds(300));
      if (w.code() != absl::StatusCode::kDeadlineExceeded) {
        return absl::InternalError(absl::StrCat("want a deadline, got ", w.ToString()));
      }
    }
    return (*runtime)->Shutdown();  // pending requests do not block stop
  }));
}

TEST(FusionRuntimeTest, APeerThatDisappearsFailsTheOthersWithinTheTimeout) {
  const TensorLayout layout = Layout();
  InMemoryStore store;
  auto group = MakeGroup(store, 2, "g");
  const std::vector<absl::Status> status =
      RunRanks(2, [&](int r) -> absl::Status {
        std::vector<float> grads(layout.total_elements());
        FusionOptions options;
        options.timeout = absl::Seconds(2);
        auto runtime = FusionRuntime::Start(group[r].get(), group[r].get(),
                                            layout, absl::MakeSpan(grads),
                                            options);
        if (!runtime.ok()) return runtime.status();
        if (r == 1) {
          runtime->reset();    // stops cycling without telling rank 0
          group[1].reset();    // and its connections go away
          return absl::OkStatus();
        }
        (*runtime)->Enqueue(0);
        return (*runtime)->WaitForReduced(1, absl::Seconds(30));
      });
  EXPECT_TRUE(status[1].ok());
  EXPECT_FALSE(status[0].ok());
  EXPECT_NE(status[0].code(), absl::StatusCode::kDeadlineExceeded)
      << "rank 0 should fail from its collective's deadline (2 s), not wait "
         "30 s: "
      << status[0];
  EXPECT_NE(status[0].message().find("fusion runtime"), std::string::npos)
      << status[0];
}

// Host memory whose gradients are written by a "producer" after Enqueue,
// the way a GPU's kernels finish after the host queued them: Ready is false
// until the producer says the values are written. Counts probes and copies.
class LateProducerMemory final : public FusionMemory {
 public:
  void MarkWritten() { written_.store(true); }
  absl::StatusOr<bool> Ready(int) override {
    ++probes_;
    return written_.load();
  }
  absl::StatusOr<absl::Span<float>> Buffer(int64_t floats) override {
    return host_.Buffer(floats);
  }
  absl::Status Copy(float* dst, const float* src, int64_t floats) override {
    ++copies_;
    return host_.Copy(dst, src, floats);
  }
  int64_t probes() const { return probes_; }
  int64_t copies() const { return copies_; }

 private:
  std::atomic<bool> written_{false};
  std::atomic<int64_t> probes_{0}, copies_{0};
  HostFusionMemory host_;
};

// Every tensor is enqueued before its gradient exists; the runtime must
// wait for Ready (and go through the memory's buffer and copies), so every
// rank still ends with the averages of the values written later.
TEST(FusionRuntimeTest, TensorsWaitUntilTheirMemoryIsReady) {
  const TensorLayout layout = Layout();
  const int n = layout.num_tensors();
  InMemoryStore store;
  auto control = MakeGroup(store, 2, "ctl");
  auto data = MakeGroup(store, 2, "data");
  ExpectAllOk(RunRanks(2, [&](int r) -> absl::Status {
    std::vector<float> grads(layout.total_elements(), -1.0f);
    LateProducerMemory memory;
    FusionOptions options;
    options.in_place_contiguous = false;  // one fused batch via the buffer
    options.timeout = absl::Seconds(20);
    auto runtime =
        FusionRuntime::Start(control[r].get(), data[r].get(), layout,
                             absl::MakeSpan(grads), options, &memory);
    if (!runtime.ok()) return runtime.status();
    for (int t = n - 1; t >= 0; --t) (*runtime)->Enqueue(t);
    // The producer, much slower than the 1 ms cycle.
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    for (int t = 0; t < n; ++t) {
      absl::Span<float> view = layout.View(t, absl::MakeSpan(grads));
      for (size_t i = 0; i < view.size(); ++i) view[i] = G(r, 0, t, i);
    }
    memory.MarkWritten();
    absl::Status w = (*runtime)->WaitForReduced(n, absl::Seconds(20));
    if (!w.ok()) return w;
    for (int t = 0; t < n; ++t) {
      absl::Span<const float> view = layout.View(t, absl::MakeConstSpan(grads));
      for (size_t i = 0; i < view.size(); ++i) {
        if (std::abs(view[i] - Average(2, 0, t, i)) > 1e-4f) {
          return absl::InternalError(absl::StrCat(
              "tensor ", layout.tensor(t).name, "[", i, "] = ", view[i],
              ", want ", Average(2, 0, t, i)));
        }
      }
    }
    if (memory.probes() <= n) {
      return absl::InternalError(
          absl::StrCat("expected repeated readiness probes, got ",
                       memory.probes(), " for ", n, " tensors"));
    }
    if (memory.copies() != 2 * n) {
      return absl::InternalError(absl::StrCat(
          "expected ", 2 * n, " copies through the memory, got ",
          memory.copies()));
    }
    return (*runtime)->Shutdown();
  }));
}

// With the fusion buffer in use, each tensor's lane shows every phase.
TEST(FusionRuntimeTest, TimelineShowsEveryPhasePerTensor) {
  const TensorLayout layout = Layout();
  const int n = layout.num_tensors();
  const std::string dir = ::testing::TempDir();
  InMemoryStore store;
  auto group = MakeGroup(store, 2, "g");
  ExpectAllOk(RunRanks(2, [&](int r) -> absl::Status {
    auto timeline = Timeline::Open(dir + "/fusion_timeline.{rank}.json", r);
    if (!timeline.ok()) return timeline.status();
    std::vector<float> grads(layout.total_elements());
    FusionOptions options;
    options.in_place_contiguous = false;
    options.timeout = absl::Seconds(20);
    options.timeline = timeline->get();
    auto runtime = FusionRuntime::Start(group[r].get(), group[r].get(), layout,
                                        absl::MakeSpan(grads), options);
    if (!runtime.ok()) return runtime.status();
    for (int t = n - 1; t >= 0; --t) (*runtime)->Enqueue(t);
    absl::Status w = (*runtime)->WaitForReduced(n, absl::Seconds(20));
    if (!w.ok()) return w;
    absl::Status s = (*runtime)->Shutdown();
    if (!s.ok()) return s;
    return (*timeline)->Close();
  }));
  const std::string merged = dir + "/fusion_timeline.json";
  ASSERT_TRUE(MergeTimelines({dir + "/fusion_timeline.0.json",
                              dir + "/fusion_timeline.1.json"},
                             merged)
                  .ok());
  std::ifstream in(merged);
  const nlohmann::json events = nlohmann::json::parse(in);
  ASSERT_TRUE(events.is_array());
  std::set<std::tuple<int, std::string>> lanes;  // (pid, lane name)
  std::map<std::tuple<int, int>, std::string> lane_name;  // (pid, tid)
  for (const auto& e : events) {
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      lane_name[{e["pid"].get<int>(), e["tid"].get<int>()}] =
          e["args"]["name"].get<std::string>();
    }
  }
  std::map<std::tuple<int, std::string>, std::set<std::string>> phases;
  for (const auto& e : events) {
    if (e["ph"] != "X") continue;
    EXPECT_GE(e["dur"].get<int64_t>(), 0);
    const int pid = e["pid"].get<int>();
    phases[{pid, lane_name[{pid, e["tid"].get<int>()}]}].insert(
        e["name"].get<std::string>());
  }
  const std::set<std::string> want = {"NEGOTIATE", "QUEUE",
                                      "MEMCPY_IN_FUSION_BUFFER", "ALLREDUCE",
                                      "MEMCPY_OUT"};
  for (int pid = 0; pid < 2; ++pid) {
    for (int t = 0; t < n; ++t) {
      EXPECT_EQ((phases[{pid, layout.tensor(t).name}]), want)
          << "rank " << pid << " tensor " << layout.tensor(t).name;
    }
  }
}

}  // namespace
}  // namespace ringside

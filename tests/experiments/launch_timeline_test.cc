// Integration: `launch --timeline` with the real worker and ps_server
// binaries writes one merged Chrome-trace file per job, with every rank's
// compute spans and the strategy's communication phases on each tensor's
// lane; `compare --timeline` writes one per strategy; the worker refuses an
// unwritable --timeline with exit code 2.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "experiments/job/process_group.h"

namespace ringside {
namespace {

using nlohmann::json;

constexpr int kSteps = 3;
constexpr int kWorkers = 2;

std::string Runfile(const std::string& path) {
  return absl::StrCat(std::getenv("TEST_SRCDIR"), "/ringside/", path);
}

std::string TmpPath(const std::string& name) {
  return absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
}

// Small MLP 16-32-8: tensors fc0.weight (512 floats), fc0.bias (32),
// fc1.weight (256), fc1.bias (8); 1 KiB chunks so tensors span chunks.
const std::map<std::string, int64_t> kTensorBytes = {{"fc0.weight", 2048},
                                                     {"fc0.bias", 128},
                                                     {"fc1.weight", 1024},
                                                     {"fc1.bias", 32}};
const std::vector<std::string> kWorkerArgs = {
    "--mlp_widths=16,32,8", "--warmup_steps=1", "--train_examples=512",
    "--eval_examples=64"};

// Runs an experiments/ binary with the real worker and ps_server; the
// workers get kWorkerArgs and `worker_args`.
absl::Status RunBinary(const std::string& binary,
                       const std::vector<std::string>& flags,
                       const std::vector<std::string>& worker_args = {}) {
  ProcessGroupOptions options;
  options.deadline = absl::Seconds(120);
  ProcessGroup group(options);
  ChildSpec child;
  child.label = binary;
  child.argv = {Runfile("experiments/" + binary),
                "--worker_bin=" + Runfile("worker/worker"),
                "--ps_server_bin=" + Runfile("server/ps_server"),
                absl::StrCat("--workers=", kWorkers),
                absl::StrCat("--steps=", kSteps)};
  child.argv.insert(child.argv.end(), flags.begin(), flags.end());
  child.argv.push_back("--");
  child.argv.insert(child.argv.end(), kWorkerArgs.begin(), kWorkerArgs.end());
  child.argv.insert(child.argv.end(), worker_args.begin(), worker_args.end());
  child.on_stdout_line = [](const std::string&, absl::string_view) {};
  absl::StatusOr<int> id = group.Start(child);
  if (!id.ok()) return id.status();
  return group.Wait();
}

json ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
}

// One complete event, with its lane name resolved.
struct Span {
  int pid;
  std::string lane;
  std::string phase;
  int64_t ts, dur;
  json args;
};

// The spans of a merged timeline; fails the test on malformed events.
std::vector<Span> SpansOf(const json& events) {
  std::map<std::pair<int, int>, std::string> lanes;
  for (const json& e : events) {
    if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name") {
      lanes[{e["pid"].get<int>(), e["tid"].get<int>()}] =
          e["args"]["name"].get<std::string>();
    }
  }
  std::vector<Span> spans;
  for (const json& e : events) {
    if (e.value("ph", "") != "X") continue;
    const std::pair<int, int> key = {e["pid"].get<int>(), e["tid"].get<int>()};
    EXPECT_TRUE(lanes.count(key)) << "span on an unnamed lane: " << e;
    EXPECT_GE(e["dur"].get<int64_t>(), 0) << e;
    spans.push_back({key.first, lanes[key], e["name"].get<std::string>(),
                     e["ts"].get<int64_t>(), e["dur"].get<int64_t>(),
                     e.value("args", json::object())});
  }
  return spans;
}

// Counts of (pid, lane, phase).
using Counts = std::map<std::tuple<int, std::string, std::string>, int>;
Counts Count(const std::vector<Span>& spans) {
  Counts counts;
  for (const Span& s : spans) ++counts[{s.pid, s.lane, s.phase}];
  return counts;
}

int CountOf(const Counts& counts, int pid, const std::string& lane,
            const std::string& phase) {
  auto it = counts.find({pid, lane, phase});
  return it == counts.end() ? 0 : it->second;
}

// Per rank, the step phases every strategy records.
void ExpectStepSpans(const std::vector<Span>& spans) {
  const Counts counts = Count(spans);
  for (int rank = 0; rank < kWorkers; ++rank) {
    EXPECT_EQ(CountOf(counts, rank, "step", "FORWARD_BACKWARD"), kSteps)
        << "rank " << rank;
    EXPECT_EQ(CountOf(counts, rank, "step", "FINISH_STEP"), kSteps)
        << "rank " << rank;
  }
}

// Every rank has `phase` once per step on every tensor's lane, with the
// step and the tensor's bytes as args.
void ExpectTensorPhase(const std::vector<Span>& spans,
                       const std::string& phase) {
  for (int rank = 0; rank < kWorkers; ++rank) {
    for (const auto& [tensor, bytes] : kTensorBytes) {
      std::set<int64_t> steps;
      for (const Span& s : spans) {
        if (s.pid != rank || s.lane != tensor || s.phase != phase) continue;
        steps.insert(s.args.value("step", int64_t{-1}));
        EXPECT_EQ(s.args.value("bytes", int64_t{-1}), bytes)
            << phase << " of " << tensor << " on rank " << rank;
      }
      EXPECT_EQ(steps, (std::set<int64_t>{0, 1, 2}))
          << phase << " of " << tensor << " on rank " << rank;
    }
  }
}

// The span of (rank, tensor, phase) at `step`; dur -1 when absent.
Span Find(const std::vector<Span>& spans, int rank, const std::string& tensor,
          const std::string& phase, int64_t step) {
  for (const Span& s : spans) {
    if (s.pid == rank && s.lane == tensor && s.phase == phase &&
        s.args.value("step", int64_t{-1}) == step) {
      return s;
    }
  }
  return {rank, tensor, phase, 0, -1, json()};
}

class LaunchTimelineTest
    : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(LaunchTimelineTest, MergedFileHoldsEveryRanksPhases) {
  const auto [strategy, servers] = GetParam();
  const std::string path = TmpPath(absl::StrCat(strategy, ".json"));
  std::vector<std::string> flags = {absl::StrCat("--strategy=", strategy),
                                    absl::StrCat("--timeline=", path)};
  std::vector<std::string> worker_args;
  if (servers > 0) {
    flags.push_back(absl::StrCat("--servers=", servers));
    worker_args.push_back("--chunk_kb=1");  // tensors span chunks
  }
  absl::Status run = RunBinary("launch", flags, worker_args);
  ASSERT_TRUE(run.ok()) << run;

  const json events = ReadJson(path);
  ASSERT_FALSE(events.is_discarded()) << path << " is not valid JSON";
  ASSERT_TRUE(events.is_array());
  for (int rank = 0; rank < kWorkers; ++rank) {
    EXPECT_FALSE(
        std::filesystem::exists(absl::StrCat(path, ".rank", rank, ".json")))
        << "rank " << rank << "'s part was not deleted";
  }
  std::set<int> named;
  for (const json& e : events) {
    if (e.value("name", "") == "process_name") {
      named.insert(e["pid"].get<int>());
      EXPECT_EQ(e["args"]["name"], absl::StrCat("rank ", e["pid"].get<int>()));
    }
  }
  EXPECT_EQ(named, (std::set<int>{0, 1}));

  const std::vector<Span> spans = SpansOf(events);
  ExpectStepSpans(spans);
  if (strategy == "ring") {
    ExpectTensorPhase(spans, "QUEUE");
    ExpectTensorPhase(spans, "ALLREDUCE");
    const Counts counts = Count(spans);
    for (int rank = 0; rank < kWorkers; ++rank) {
      EXPECT_EQ(CountOf(counts, rank, "step", "OPTIMIZER"), kSteps) << rank;
      // A tensor's all-reduce starts when its queue time ends.
      const Span queue = Find(spans, rank, "fc0.bias", "QUEUE", 1);
      const Span reduce = Find(spans, rank, "fc0.bias", "ALLREDUCE", 1);
      ASSERT_GE(queue.dur, 0);
      ASSERT_GE(reduce.dur, 0);
      EXPECT_EQ(queue.ts + queue.dur, reduce.ts);
    }
  } else if (strategy == "zero3") {
    // Each tensor gathered before use and its gradient reduce-scattered,
    // every step; the optimizer on each rank's shard.
    ExpectTensorPhase(spans, "ALLGATHER");
    ExpectTensorPhase(spans, "REDUCE_SCATTER");
    const Counts counts = Count(spans);
    for (int rank = 0; rank < kWorkers; ++rank) {
      EXPECT_EQ(CountOf(counts, rank, "step", "OPTIMIZER"), kSteps) << rank;
      // The last layer's forward gather precedes its reduce-scatter.
      const Span gather = Find(spans, rank, "fc1.weight", "ALLGATHER", 1);
      const Span scatter = Find(spans, rank, "fc1.weight", "REDUCE_SCATTER", 1);
      ASSERT_GE(gather.dur, 0);
      ASSERT_GE(scatter.dur, 0);
      EXPECT_LE(gather.ts + gather.dur, scatter.ts);
    }
  } else {
    ExpectTensorPhase(spans, "PUSH");
    ExpectTensorPhase(spans, "PULL");
    for (int rank = 0; rank < kWorkers; ++rank) {
      for (const auto& [tensor, bytes] : kTensorBytes) {
        // The server serves step t+1 only after this rank pushed step t.
        const Span push = Find(spans, rank, tensor, "PUSH", 1);
        const Span pull = Find(spans, rank, tensor, "PULL", 1);
        ASSERT_GE(push.dur, 0) << tensor;
        ASSERT_GE(pull.dur, 0) << tensor;
        EXPECT_GE(pull.ts + pull.dur, push.ts) << tensor << " rank " << rank;
      }
      // Per-chunk spans on every shard's lanes.
      const Counts counts = Count(spans);
      for (int shard = 0; shard < servers; ++shard) {
        EXPECT_GT(CountOf(counts, rank, absl::StrCat("shard ", shard, " push"),
                          "PUSH_CHUNK"),
                  0)
            << "rank " << rank << " shard " << shard;
        EXPECT_GT(CountOf(counts, rank, absl::StrCat("shard ", shard, " pull"),
                          "PULL_CHUNK"),
                  0)
            << "rank " << rank << " shard " << shard;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Strategies, LaunchTimelineTest,
                         ::testing::Values(std::make_tuple("ring", 0),
                                           std::make_tuple("zero3", 0),
                                           std::make_tuple("sps", 1),
                                           std::make_tuple("dps", 2)));

TEST(LaunchTimelineTest, UnwritableTimelineFailsBeforeStarting) {
  absl::Status run = RunBinary(
      "launch",
      {"--strategy=ring", "--timeline=" + TmpPath("no/such/dir/t.json")});
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.message().find("cannot write timeline"), std::string::npos)
      << run;
}

TEST(CompareTimelineTest, WritesOneTimelinePerStrategy) {
  const std::string dir = TmpPath("compare_timeline");
  absl::Status run = RunBinary(
      "compare",
      {"--strategies=ring", "--timeline", "--repeats=0", "--out_dir=" + dir});
  ASSERT_TRUE(run.ok()) << run;
  for (const std::string strategy : {"baseline", "ring"}) {
    const json events =
        ReadJson(absl::StrCat(dir, "/timeline_", strategy, ".json"));
    ASSERT_TRUE(events.is_array()) << strategy;
    const std::vector<Span> spans = SpansOf(events);
    std::set<int> pids;
    for (const Span& s : spans) {
      if (s.phase == "FORWARD_BACKWARD") pids.insert(s.pid);
    }
    const std::set<int> want =
        strategy == "baseline" ? std::set<int>({0}) : std::set<int>({0, 1});
    EXPECT_EQ(pids, want) << strategy;
  }
  const json report = ReadJson(dir + "/compare.json");
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report["runs"][1]["timeline"],
            std::filesystem::absolute(dir + "/timeline_ring.json").string());
}

TEST(WorkerTimelineTest, UnwritableTimelineIsABadFlag) {
  ProcessGroupOptions options;
  options.deadline = absl::Seconds(30);
  options.relay_stderr = false;
  ProcessGroup group(options);
  ChildSpec child;
  child.label = "worker";
  child.argv = {Runfile("worker/worker"),
                "--timeline=" + TmpPath("no/such/dir/{rank}.json")};
  absl::StatusOr<int> id = group.Start(child);
  ASSERT_TRUE(id.ok()) << id.status();
  absl::Status s = group.Wait();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(group.exit_code(*id), 2);
  EXPECT_NE(s.message().find("cannot write timeline"), std::string::npos) << s;
  EXPECT_NE(s.message().find("no/such/dir/0.json"), std::string::npos) << s;
}

}  // namespace
}  // namespace ringside

// RunLocalJob against fake ps_server / worker shell scripts that speak the
// launcher protocol (fake_ps_server.sh, fake_worker.sh).
#include "experiments/job/local_job.h"

#include <errno.h>

#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringside {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Script(const char* name) {
  absl::StatusOr<std::string> path = FindBinary(
      program_invocation_name, std::string("tests/experiments/") + name);
  EXPECT_TRUE(path.ok()) << path.status();
  return path.ok() ? *path : "";
}

LocalJobOptions FakeJob(const std::string& strategy, int workers, int servers) {
  LocalJobOptions o;
  o.ps_server_bin = Script("fake_ps_server.sh");
  o.worker_bin = Script("fake_worker.sh");
  o.strategy = strategy;
  o.num_workers = workers;
  o.num_servers = servers;
  o.worker_args = {"--steps=7"};
  o.deadline = absl::Seconds(20);
  o.listen_timeout = absl::Seconds(5);
  o.server_exit_timeout = absl::Seconds(5);
  o.kill_grace = absl::Seconds(1);
  return o;
}

TEST(LocalJobTest, OneServerTwoWorkers) {
  LocalJobOptions o = FakeJob("sps", 2, 1);
  o.keep_steps = true;
  std::vector<int> record_ranks;
  o.on_record = [&](int rank, absl::string_view, const json&) {
    record_ranks.push_back(rank);
  };
  const absl::StatusOr<LocalJobResult> r = RunLocalJob(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->server_ports, ElementsAre(40000));
  ASSERT_EQ(r->finals.size(), 2u);
  for (int rank = 0; rank < 2; ++rank) {
    const json& f = r->finals[rank];
    EXPECT_EQ(f["rank"], rank);
    EXPECT_EQ(f["world_size"], 2);
    EXPECT_EQ(f["strategy"], "sps");
    EXPECT_EQ(f["servers"], "127.0.0.1:40000");
    EXPECT_EQ(f["steps"], 7);  // worker_args reach every worker
    ASSERT_EQ(r->steps[rank].size(), 1u);
    EXPECT_EQ(r->steps[rank][0]["event"], "step");
  }
  EXPECT_EQ(record_ranks.size(), 4u);  // 2 steps + 2 finals; non-JSON dropped
  EXPECT_GT(r->wall_s, 0);
  EXPECT_TRUE(r->warnings.empty());
}

TEST(LocalJobTest, ShardedServersAreListedInShardOrder) {
  const absl::StatusOr<LocalJobResult> r = RunLocalJob(FakeJob("dps", 2, 3));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->server_ports, ElementsAre(40000, 40001, 40002));
  EXPECT_EQ(r->finals[1]["servers"],
            "127.0.0.1:40000,127.0.0.1:40001,127.0.0.1:40002");
}

TEST(LocalJobTest, NoServersMeansNoServersFlag) {
  const absl::StatusOr<LocalJobResult> r =
      RunLocalJob(FakeJob("baseline", 1, 0));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->server_ports.empty());
  EXPECT_EQ(r->finals[0]["servers"], "");
  EXPECT_THAT(r->finals[0]["args"].get<std::string>(),
              ::testing::Not(HasSubstr("--servers")));
}

TEST(LocalJobTest, FailingWorkerFailsTheJobAndNamesIt) {
  LocalJobOptions o = FakeJob("sps", 3, 1);
  o.env = {"FAKE_WORKER_FAIL_RANK=1", "FAKE_SERVER_MODE=hang"};
  const absl::Time start = absl::Now();
  const absl::StatusOr<LocalJobResult> r = RunLocalJob(o);
  EXPECT_LT(absl::Now() - start, absl::Seconds(4));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("worker/1"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("code 2"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("boom on rank 1"));
}

TEST(LocalJobTest, ServerFailingBeforeListeningIsReported) {
  LocalJobOptions o = FakeJob("sps", 2, 1);
  o.env = {"FAKE_SERVER_MODE=fail"};
  const absl::StatusOr<LocalJobResult> r = RunLocalJob(o);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("server/0"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("cannot bind"));
}

TEST(LocalJobTest, SilentServerTimesOut) {
  LocalJobOptions o = FakeJob("sps", 2, 1);
  o.env = {"FAKE_SERVER_MODE=silent"};
  o.listen_timeout = absl::Milliseconds(300);
  const absl::Time start = absl::Now();
  const absl::StatusOr<LocalJobResult> r = RunLocalJob(o);
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("server/0 printed no listening line"));
}

TEST(LocalJobTest, LingeringServerIsTerminatedWithAWarning) {
  LocalJobOptions o = FakeJob("sps", 2, 1);
  o.env = {"FAKE_SERVER_MODE=hang"};
  o.server_exit_timeout = absl::Milliseconds(200);
  const absl::StatusOr<LocalJobResult> r = RunLocalJob(o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_THAT(r->warnings[0], HasSubstr("server/0"));
}

TEST(LocalJobTest, WorkerWithoutFinalRecordIsDataLoss) {
  LocalJobOptions o = FakeJob("baseline", 1, 0);
  o.env = {"FAKE_WORKER_NO_FINAL=1"};
  const absl::StatusOr<LocalJobResult> r = RunLocalJob(o);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("worker/0"));
}

TEST(LocalJobTest, InvalidOptions) {
  LocalJobOptions o = FakeJob("sps", 0, 1);
  EXPECT_EQ(RunLocalJob(o).status().code(), absl::StatusCode::kInvalidArgument);
  o = FakeJob("sps", 1, 1);
  o.ps_server_bin.clear();
  EXPECT_EQ(RunLocalJob(o).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(LocalJobTest, ListStrategies) {
  const absl::StatusOr<std::vector<ListedStrategy>> s =
      ListStrategies(Script("fake_worker.sh"));
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->size(), 3u);
  EXPECT_EQ((*s)[0].name, "baseline");
  EXPECT_EQ((*s)[0].servers, ServerKind::kNone);
  EXPECT_EQ((*s)[1].servers, ServerKind::kOne);
  EXPECT_EQ((*s)[2].servers, ServerKind::kSharded);
  EXPECT_EQ((*s)[1].display_name, "SPS");
  EXPECT_EQ((*s)[1].study_order, 1);
  EXPECT_EQ((*s)[1].modelled_as, "sps");
  EXPECT_TRUE((*s)[1].Reads("chunk_kb"));
  EXPECT_FALSE((*s)[0].Reads("chunk_kb"));
  EXPECT_EQ(ServersFor(ServerKind::kNone, 4), 0);
  EXPECT_EQ(ServersFor(ServerKind::kOne, 4), 1);
  EXPECT_EQ(ServersFor(ServerKind::kSharded, 4), 4);
  EXPECT_TRUE((*s)[1].study_flags.empty());
  // CUDA workers: runnable unless the listing says otherwise.
  EXPECT_TRUE((*s)[1].cuda_runs);
  EXPECT_FALSE((*s)[2].cuda_runs);
  EXPECT_EQ((*s)[2].cuda, "not supported (a test)");
}

TEST(LocalJobTest, ListStrategiesReadsStudyFlagsAndVariantOptions) {
  setenv("FAKE_WORKER_ASYNC", "1", 1);
  const absl::StatusOr<std::vector<ListedStrategy>> s =
      ListStrategies(Script("fake_worker.sh"));
  unsetenv("FAKE_WORKER_ASYNC");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->size(), 5u);
  EXPECT_EQ((*s)[3].name, "async_ps");
  EXPECT_EQ((*s)[3].study_flags, std::vector<std::string>{"--staleness=2"});
  EXPECT_EQ((*s)[3].variant_options, std::vector<std::string>{"staleness"});
  EXPECT_TRUE((*s)[1].variant_options.empty());  // listed without the field
}

// A strategy gets the shared worker flags except those only other
// strategies read, in every spelling; the dropped ones are reported.
TEST(LocalJobTest, WorkerArgsForDropsOtherStrategiesFlags) {
  ListedStrategy ring, sps, async_ps;
  ring.name = "ring";
  ring.options = {"ring_bucket_kb"};
  sps.name = "sps";
  sps.options = {"chunk_kb"};
  async_ps.name = "async_ps";
  async_ps.options = {"staleness", "chunk_kb", "overlap"};
  const std::vector<ListedStrategy> listed = {ring, sps, async_ps};
  const std::vector<std::string> args = {
      "--mlp_widths=8,4",   "--chunk_kb=1", "--staleness", "2",
      "--ring_bucket_kb=0", "--nooverlap",  "--lr",        "0.1"};
  std::vector<std::string> dropped;
  EXPECT_EQ(WorkerArgsFor(ring, listed, args, &dropped),
            (std::vector<std::string>{"--mlp_widths=8,4", "--ring_bucket_kb=0",
                                      "--lr", "0.1"}));
  EXPECT_EQ(dropped, (std::vector<std::string>{"--chunk_kb=1", "--staleness 2",
                                               "--nooverlap"}));
  dropped.clear();
  EXPECT_EQ(WorkerArgsFor(async_ps, listed, args, &dropped),
            (std::vector<std::string>{"--mlp_widths=8,4", "--chunk_kb=1",
                                      "--staleness", "2", "--nooverlap", "--lr",
                                      "0.1"}));
  EXPECT_EQ(dropped, (std::vector<std::string>{"--ring_bucket_kb=0"}));
}

TEST(LocalJobTest, FindBinaryReportsMissingFiles) {
  EXPECT_EQ(FindBinary(program_invocation_name, "server/no_such_binary")
                .status()
                .code(),
            absl::StatusCode::kNotFound);
}

TEST(LocalJobTest, SplitPassThroughArgs) {
  char a0[] = "launch", a1[] = "--workers=2", a2[] = "--", a3[] = "--lr=0.1";
  char* argv[] = {a0, a1, a2, a3, nullptr};
  int argc = 4;
  EXPECT_THAT(SplitPassThroughArgs(&argc, argv), ElementsAre("--lr=0.1"));
  EXPECT_EQ(argc, 2);
}

// A worker whose Gloo loop waited for a core more than half its run is
// named, with the seconds and its policy; one that waited less, or has no
// Gloo loop, is not.
TEST(StarvedLoopWarningsTest, NamesOnlyTheStarvedRanks) {
  const std::vector<json> finals = {
      json{{"wall_s", 10.0},
           {"gloo_loop", {{"policy", "idle"}, {"wait_s", 9.0}}}},
      json{{"wall_s", 10.0},
           {"gloo_loop", {{"policy", "paced"}, {"wait_s", 1.0}}}},
      json{{"wall_s", 10.0}},
      json::object()};
  const std::vector<std::string> warnings = StarvedLoopWarnings(finals);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("worker/0"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("9.0 s"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("--gloo_event_loop=idle"), std::string::npos)
      << warnings[0];
}

}  // namespace
}  // namespace ringside

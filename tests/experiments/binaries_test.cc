// End-to-end runs of the `launch` and `compare` binaries against the fake
// ps_server / worker scripts.
#include <errno.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "experiments/local_job.h"
#include "experiments/process_group.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringside {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

std::string Runfile(const std::string& path) {
  absl::StatusOr<std::string> found = FindBinary(program_invocation_name, path);
  EXPECT_TRUE(found.ok()) << found.status();
  return found.ok() ? *found : "";
}

struct Outcome {
  absl::Status status;
  std::vector<std::string> stdout_lines;
};

// Runs `binary` with the fake scripts and `args`; stderr is relayed.
Outcome RunBinary(const std::string& binary, std::vector<std::string> args,
                  const std::vector<std::string>& env = {}) {
  ProcessGroupOptions options;
  options.deadline = absl::Seconds(30);
  ProcessGroup group(options);
  Outcome outcome;
  ChildSpec spec;
  spec.label = binary;
  spec.argv = {
      Runfile("experiments/" + binary),
      "--ps_server_bin=" + Runfile("tests/experiments/fake_ps_server.sh"),
      "--worker_bin=" + Runfile("tests/experiments/fake_worker.sh")};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = env;
  spec.on_stdout_line = [&](const std::string&, absl::string_view line) {
    outcome.stdout_lines.emplace_back(line);
  };
  absl::StatusOr<int> id = group.Start(std::move(spec));
  outcome.status = id.ok() ? group.Wait() : id.status();
  return outcome;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(LaunchTest, EchoesWorkerRecordsWithRanks) {
  const Outcome out =
      RunBinary("launch", {"--strategy=dps", "--workers=2", "--servers=2",
                           "--steps=3", "--", "--lr=0.5"});
  ASSERT_TRUE(out.status.ok()) << out.status;
  ASSERT_EQ(out.stdout_lines.size(), 4u);  // step + final per worker
  int finals = 0;
  for (const std::string& line : out.stdout_lines) {
    const json j = json::parse(line);
    ASSERT_TRUE(j.contains("rank")) << line;
    if (j["event"] == "step") {
      // Step records carry no rank: launch puts it first, keeping the rest.
      EXPECT_EQ(line, "{\"rank\":" + std::to_string(j["rank"].get<int>()) +
                          ",\"event\":\"step\",\"step\":0,\"loss\":1.5}");
    }
    if (j["event"] == "final") {
      EXPECT_EQ(line.rfind("{\"event\":\"final\",\"rank\":", 0), 0u)
          << "final records are echoed as printed: " << line;
      ++finals;
      EXPECT_EQ(j["servers"], "127.0.0.1:40000,127.0.0.1:40001");
      EXPECT_EQ(j["steps"], 3);
      EXPECT_THAT(j["args"].get<std::string>(), HasSubstr("--lr=0.5"));
    }
  }
  EXPECT_EQ(finals, 2);
}

TEST(LaunchTest, FailingWorkerMakesLaunchFail) {
  const Outcome out = RunBinary("launch", {"--strategy=sps", "--workers=2"},
                                {"FAKE_WORKER_FAIL_RANK=1"});
  EXPECT_FALSE(out.status.ok());
  EXPECT_THAT(std::string(out.status.message()), HasSubstr("code 1"));
  EXPECT_THAT(std::string(out.status.message()), HasSubstr("worker/1"));
}

TEST(LaunchTest, RejectsUnknownStrategyAndWrongServerCount) {
  EXPECT_FALSE(RunBinary("launch", {"--strategy=nope"}).status.ok());
  EXPECT_FALSE(
      RunBinary("launch", {"--strategy=sps", "--servers=2"}).status.ok());
  EXPECT_FALSE(
      RunBinary("launch", {"--strategy=baseline", "--servers=1"}).status.ok());
}

TEST(CompareTest, PrintsTableAndWritesFiles) {
  const std::string dir =
      std::string(std::getenv("TEST_TMPDIR")) + "/compare_out";
  const Outcome out = RunBinary("compare", {"--workers=2", "--servers=3",
                                            "--steps=5", "--out_dir=" + dir});
  ASSERT_TRUE(out.status.ok()) << out.status;
  std::string table;
  for (const std::string& l : out.stdout_lines) table += l + "\n";
  EXPECT_THAT(table, HasSubstr("| Parallel type | PrmSrv |  W0 |  W1 | Total"));
  // Fake throughput is 100 * world_size: speedup 2, efficiency 1.
  EXPECT_THAT(table, HasSubstr("| Baseline      |      0 | 80% |   0 |"));
  EXPECT_THAT(table, HasSubstr("| SPS           |      1 | 80% | 70% |  1.50 "
                               "|                  200.0 |    2.00 "
                               "|         1.00 |"));
  EXPECT_THAT(table, HasSubstr("| DPS           |      3 |"));
  // 2 workers + 3 servers exceed the cores of most test machines.
  if (std::thread::hardware_concurrency() < 5) {
    EXPECT_THAT(table, HasSubstr("Note: dps ran 2 workers + 3 servers on"));
  }
  if (std::thread::hardware_concurrency() < 3) {
    EXPECT_THAT(table, HasSubstr("Note: sps ran 2 workers + 1 server on"));
  }
  EXPECT_EQ(ReadFile(dir + "/compare.md"), table);
  EXPECT_THAT(ReadFile(dir + "/compare.csv"),
              HasSubstr("sps,SPS,1,0.8000,0.7000,1.5000,200.000,2.0000"));
  const json j = json::parse(ReadFile(dir + "/compare.json"));
  EXPECT_EQ(j["report"]["rows"].size(), 3u);
  EXPECT_EQ(j["runs"][2]["servers"], 3);
  EXPECT_EQ(j["config"]["steps"], 5);
}

TEST(CompareTest, ChosenStrategiesRunAfterTheBaseline) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/only_sps";
  const Outcome out = RunBinary(
      "compare", {"--workers=2", "--strategies=sps", "--out_dir=" + dir});
  ASSERT_TRUE(out.status.ok()) << out.status;
  const json j = json::parse(ReadFile(dir + "/compare.json"));
  ASSERT_EQ(j["report"]["rows"].size(), 2u);
  EXPECT_EQ(j["report"]["rows"][0]["strategy"], "baseline");
  EXPECT_EQ(j["report"]["rows"][1]["strategy"], "sps");
}

TEST(CompareTest, FailedStrategyIsReportedAndExitCodeIsOne) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/failed";
  const Outcome out = RunBinary("compare", {"--workers=2", "--out_dir=" + dir},
                                {"FAKE_WORKER_FAIL_RANK=1"});
  EXPECT_THAT(std::string(out.status.message()), HasSubstr("code 1"));
  std::string table;
  for (const std::string& l : out.stdout_lines) table += l + "\n";
  EXPECT_THAT(table, HasSubstr("| Baseline"));  // rank 0 only: succeeds
  EXPECT_THAT(table, HasSubstr("Failed: sps: INTERNAL: worker/1"));
}

}  // namespace
}  // namespace ringside

// End-to-end runs of the `launch` binary against the fake ps_server /
// worker scripts: the workers' records, the flags it forwards, failures.
#include <nlohmann/json.hpp>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/experiments/binary_runner.h"

namespace ringside {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

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

TEST(LaunchTest, ForwardsTheDeviceToEveryWorker) {
  const Outcome out = RunBinary(
      "launch", {"--strategy=baseline", "--device=cuda", "--", "--gpus=0"});
  ASSERT_TRUE(out.status.ok()) << out.status;
  int finals = 0;
  for (const std::string& line : out.stdout_lines) {
    const json j = json::parse(line);
    if (j["event"] != "final") continue;
    ++finals;
    EXPECT_THAT(j["args"].get<std::string>(),
                HasSubstr("--device=cuda --gpus=0"));
  }
  EXPECT_EQ(finals, 1);
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

}  // namespace
}  // namespace ringside

// End-to-end runs of the `compare` binary against the fake ps_server /
// worker scripts: loss curves and time to target, and the link sweep's
// crossover table.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/experiments/binary_runner.h"

namespace ringside {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

// Loss curves from the fake workers' eval records (FAKE_WORKER_EVAL): rank
// 0's go into each row; the baseline's lowest loss (1.2 at 1.0 s) is the
// largest, so it is the target, which sps reached at its first evaluation.
TEST(CompareTest, LossCurvesAndTimeToTarget) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/curves";
  Outcome out = RunBinary("compare",
                          {"--workers=2", "--strategies=sps", "--steps=10",
                           "--eval_every=5", "--out_dir=" + dir},
                          {"FAKE_WORKER_EVAL=1"});
  ASSERT_TRUE(out.status.ok()) << out.status;
  std::string md = ReadFile(dir + "/compare.md");
  EXPECT_THAT(md, HasSubstr("\nTarget loss 1.2000 (reached by every exact "
                            "run; lossy and stale runs do not set it; "
                            "--target_loss sets it). Time to target:"));
  EXPECT_THAT(md, HasSubstr("| Val loss | Time to target (s) |\n"));
  EXPECT_THAT(md, HasSubstr("|   0.5000 |               1.00 |\n"));
  EXPECT_THAT(md, HasSubstr("|   0.5000 |               0.50 |\n"));
  EXPECT_THAT(md, HasSubstr("validation loss every 5 steps"));
  EXPECT_THAT(ReadFile(dir + "/compare.csv"),
              HasSubstr("\nsps,SPS,2,1,0.8000,0.7000,1.5000,200.000,2.0000,"
                        "1.0000,0.5,false,cpu,"));
  EXPECT_THAT(ReadFile(dir + "/compare.csv"), HasSubstr(",0.5000,1,,,\n"));
  EXPECT_EQ(ReadFile(dir + "/loss_curves.csv"),
            "strategy,parallel_type,workers,step,samples,train_wall_s,loss\n"
            "baseline,Baseline,1,4,160,0.5000,1.4\n"
            "baseline,Baseline,1,9,320,1.0000,1.2\n"
            "sps,SPS,2,4,320,0.5000,1.2\n"
            "sps,SPS,2,9,640,1.0000,1.1\n");
  json j = json::parse(ReadFile(dir + "/compare.json"));
  EXPECT_EQ(j["config"]["eval_every"], 5);
  EXPECT_EQ(j["target_loss"],
            json({{"loss", 1.2}, {"source", "reached by every exact run"}}));
  const json& sps = j["report"]["rows"][1];
  ASSERT_EQ(sps["curve"].size(), 2u);
  EXPECT_EQ(sps["curve"][1], json({{"step", 9},
                                   {"samples", 640},
                                   {"train_wall_s", 1.0},
                                   {"loss", 1.1}}));
  EXPECT_DOUBLE_EQ(sps["time_to_target_s"].get<double>(), 0.5);
  EXPECT_THAT(j["runs"][1]["finals"][0]["args"].get<std::string>(),
              HasSubstr("--eval_every=5"));
  if (access("/usr/bin/gnuplot", X_OK) == 0) {
    EXPECT_EQ(j["plots"], json({"utilization_n2.png", "speedup.png",
                                "loss_time_n2.png", "loss_samples_n2.png"}));
    EXPECT_THAT(md, HasSubstr("](loss_time_n2.png)"));
  }

  // A given target: the baseline never gets to 1.15.
  out = RunBinary("compare",
                  {"--workers=2", "--strategies=sps", "--steps=10",
                   "--eval_every=5", "--target_loss=1.15", "--out_dir=" + dir},
                  {"FAKE_WORKER_EVAL=1"});
  ASSERT_TRUE(out.status.ok()) << out.status;
  md = ReadFile(dir + "/compare.md");
  EXPECT_THAT(md, HasSubstr("\nTarget loss 1.1500 (--target_loss). "));
  EXPECT_THAT(md, HasSubstr("|   0.5000 |                  - |\n"));
  EXPECT_THAT(md, HasSubstr("|   0.5000 |               1.00 |\n"));
  j = json::parse(ReadFile(dir + "/compare.json"));
  EXPECT_EQ(j["target_loss"]["source"], "given");
  EXPECT_TRUE(j["report"]["rows"][0]["time_to_target_s"].is_null());
}

// --seeds=3: every row trains once per seed (the fake workers' losses rise
// 0.1 a seed), seed by seed through the rows; the target is the worst
// exact seed's lowest loss (the baseline's third, 1.4), each row's loss the
// median over its seeds, and the seeds table gives the ranges.
TEST(CompareTest, SeedsTrainEveryRowOncePerSeed) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/seeds";
  const Outcome out = RunBinary(
      "compare",
      {"--workers=2", "--strategies=sps", "--steps=10", "--eval_every=5",
       "--seeds=3", "--repeats=0", "--out_dir=" + dir},
      {"FAKE_WORKER_EVAL=1"});
  ASSERT_TRUE(out.status.ok()) << out.status;
  const json j = json::parse(ReadFile(dir + "/compare.json"));
  EXPECT_EQ(j["config"]["seeds"], 3);
  ASSERT_EQ(j["runs"].size(), 6u);
  const std::vector<std::pair<std::string, int>> order = {
      {"baseline", 1}, {"sps", 1}, {"baseline", 2},
      {"sps", 2},      {"baseline", 3}, {"sps", 3}};
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(j["runs"][i]["strategy"], order[i].first) << i;
    EXPECT_EQ(j["runs"][i]["seed"], order[i].second) << i;
    const std::string seed = std::to_string(order[i].second);
    EXPECT_THAT(j["runs"][i]["finals"][0]["args"].get<std::string>(),
                HasSubstr("--seed=" + seed + " --data_seed=" + seed))
        << i;
  }
  EXPECT_DOUBLE_EQ(j["target_loss"]["loss"].get<double>(), 1.4);
  const json& sps = j["report"]["rows"][1];
  EXPECT_DOUBLE_EQ(sps["eval_loss"].get<double>(), 0.625);
  ASSERT_EQ(sps["seeds"].size(), 3u);
  EXPECT_DOUBLE_EQ(sps["seeds"][2]["eval_loss"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(sps["seeds"][2]["time_to_target_s"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(sps["loss_gap"]["median"].get<double>(), 0.0);
  const std::string md = ReadFile(dir + "/compare.md");
  EXPECT_THAT(md, HasSubstr("\n## Final loss over seeds\n"));
  EXPECT_THAT(md, HasSubstr("| 0.6250 (0.5000 to 0.7500) |"));
  EXPECT_THAT(md, HasSubstr("|  3 of 3 |"));

  // Seeds the workers' flags would contradict, and no seed at all.
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"--seeds=0"},
        std::vector<std::string>{"--seeds=2", "--", "--seed=7"}}) {
    std::vector<std::string> args = {"--worker_bin=/no/such/worker",
                                     "--out_dir=" + dir + "_refused"};
    args.insert(args.begin(), flags.begin(), flags.end());
    const Outcome refused = RunBinary("compare", args);
    EXPECT_THAT(std::string(refused.status.message()), HasSubstr("code 1"));
    EXPECT_THAT(std::string(refused.status.message()),
                HasSubstr(flags.size() == 1 ? "--seeds must be >= 1"
                                            : "drop --seed from the worker"));
  }
}

// Without curves (--eval_every=0: the workers evaluate only at the end)
// there is no target, no column and no loss_curves.csv.
TEST(CompareTest, NoCurvesWithEvalEveryZero) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/flat";
  const Outcome out = RunBinary(
      "compare",
      {"--workers=2", "--strategies=sps", "--eval_every=0", "--out_dir=" + dir},
      {"FAKE_WORKER_EVAL=1"});
  ASSERT_TRUE(out.status.ok()) << out.status;
  const std::string md = ReadFile(dir + "/compare.md");
  EXPECT_THAT(md, Not(HasSubstr("Target loss")));
  EXPECT_THAT(md, Not(HasSubstr("Time to target")));
  EXPECT_FALSE(std::filesystem::exists(dir + "/loss_curves.csv"));
  const json j = json::parse(ReadFile(dir + "/compare.json"));
  EXPECT_TRUE(j["target_loss"].is_null());
  EXPECT_TRUE(j["report"]["rows"][1]["curve"].empty());
}

// Bad values are refused before any process starts: even with no worker
// binary to find, the message names the flag.
TEST(CompareTest, RefusesBadLossCurveFlags) {
  struct Case {
    const char* flag;
    const char* message;
  };
  for (const Case& c :
       {Case{"--eval_every=-1", "INVALID_ARGUMENT: --eval_every must be >= 0"},
        Case{"--target_loss=-0.5", "INVALID_ARGUMENT: --target_loss must be"},
        Case{"--target_loss=nan", "INVALID_ARGUMENT: --target_loss must be"}}) {
    const std::string flag = c.flag;
    const Outcome out = RunBinary(
        "compare",
        {flag, "--worker_bin=/no/such/worker",
         "--out_dir=" + std::string(std::getenv("TEST_TMPDIR")) + "/refused"});
    EXPECT_THAT(std::string(out.status.message()), HasSubstr("code 1")) << flag;
    EXPECT_THAT(std::string(out.status.message()), HasSubstr(c.message))
        << flag;
    EXPECT_THAT(std::string(out.status.message()),
                Not(HasSubstr("/no/such/worker")))
        << flag;
  }
}

TEST(CompareTest, LinkSweepWritesTheCrossoverTable) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/links";
  const Outcome out = RunBinary(
      "compare", {"--workers=2", "--strategies=sps,dps", "--link_gbit=0,1",
                  "--eval_every=0", "--out_dir=" + dir});
  ASSERT_TRUE(out.status.ok()) << out.status;
  // Each link's own report, then the crossover across them.
  EXPECT_TRUE(std::filesystem::exists(dir + "/link_unshaped/compare.md"));
  const std::string md = ReadFile(dir + "/crossover.md");
  EXPECT_THAT(md, HasSubstr("| unshaped loopback "));
  EXPECT_THAT(md, HasSubstr("| Fastest (measured) |"));
  if (std::filesystem::exists(dir + "/link_1gbit/compare.md")) {
    EXPECT_THAT(md, HasSubstr("| 1 Gbit/s "));
    EXPECT_THAT(ReadFile(dir + "/link_1gbit/compare.md"),
                HasSubstr("Network: netns: 1 Gbit/s links"));
    // The calibration (loopback, the same model) is measured once, for the
    // first link, and the second link's predictions reuse it.
    const json first =
        json::parse(ReadFile(dir + "/link_unshaped/compare.json"));
    const json second = json::parse(ReadFile(dir + "/link_1gbit/compare.json"));
    ASSERT_TRUE(first["cost_model"]["calibration"].is_object());
    EXPECT_EQ(second["cost_model"]["calibration"],
              first["cost_model"]["calibration"]);
  } else {  // no namespaces here: said once, the shaped link predicted only
    EXPECT_THAT(md, HasSubstr("Network shaping unavailable here"));
    EXPECT_THAT(md, HasSubstr("1 Gbit/s (not measured)"));
  }
  const json j = json::parse(ReadFile(dir + "/crossover.json"));
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0]["workers"], 2);
  EXPECT_EQ(j["rows"][0]["link"]["gbit"], 0.0);
  EXPECT_EQ(j["rows"][1]["link"]["gbit"], 1.0);
  EXPECT_THAT(ReadFile(dir + "/crossover.csv"),
              HasSubstr("link_gbit,link_latency_us,link,"));
}

// The unshaped link runs once beside shaped ones, whatever latencies go
// with the shaped ones.
TEST(CompareTest, LinkSweepKeepsTheUnshapedLinkBesideLatencies) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/lat";
  const Outcome out =
      RunBinary("compare", {"--workers=2", "--strategies=sps",
                            "--link_gbit=0,1", "--link_latency_us=50,100",
                            "--eval_every=0", "--out_dir=" + dir});
  ASSERT_TRUE(out.status.ok()) << out.status;
  EXPECT_TRUE(std::filesystem::exists(dir + "/link_unshaped/compare.md"));
  const json j = json::parse(ReadFile(dir + "/crossover.json"));
  ASSERT_FALSE(j["rows"].empty());
  EXPECT_EQ(j["rows"][0]["link"]["gbit"], 0.0);
}

TEST(CompareTest, RefusesBadLinkLists) {
  for (const auto& [flag, message] :
       std::vector<std::pair<std::string, std::string>>{
           {"--link_gbit=0,fast", "--link_gbit wants numbers"},
           {"--link_gbit=0.1,-1", "--link_gbit must be a number >= 0"},
           {"--link_latency_us=50", "needs --link_gbit > 0"},
           {"--link_gbit=1 --link_latency_us=x", "--link_latency_us wants"}}) {
    std::vector<std::string> args = absl::StrSplit(flag, ' ');
    args.push_back("--worker_bin=/no/such/worker");
    args.push_back("--out_dir=" + std::string(std::getenv("TEST_TMPDIR")) +
                   "/refused");
    const Outcome out = RunBinary("compare", args);
    EXPECT_THAT(std::string(out.status.message()), HasSubstr("code 1")) << flag;
    EXPECT_THAT(std::string(out.status.message()), HasSubstr(message)) << flag;
  }
}

}  // namespace
}  // namespace ringside

// End-to-end runs of the `compare` binary against the fake ps_server /
// worker scripts: strategy variants and the rows they name, training and
// straggler flags, presets.
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/experiments/binary_runner.h"

namespace ringside {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

// async_ps runs with the registry's study flag (--staleness=2) unless the
// user sets one; every row's name ends with the variant its final record
// gives (async_ps's bound, hierarchical's hosts × ranks per host).
TEST(CompareTest, AsyncPsRunsWithAStalenessBoundItsRowNames) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/async";
  Outcome out = RunBinary(
      "compare", {"--workers=2", "--strategies=async_ps", "--out_dir=" + dir},
      {"FAKE_WORKER_ASYNC=1"});
  ASSERT_TRUE(out.status.ok()) << out.status;
  EXPECT_THAT(ReadFile(dir + "/compare.md"), HasSubstr("| Async PS (τ=2) "));
  EXPECT_THAT(ReadFile(dir + "/compare.csv"), HasSubstr(",Async PS (τ=2),"));
  json j = json::parse(ReadFile(dir + "/compare.json"));
  EXPECT_THAT(j["runs"][1]["finals"][0]["args"].get<std::string>(),
              HasSubstr("--staleness=2"));
  // A --staleness among the worker flags wins, in the run and the name.
  out = RunBinary("compare",
                  {"--workers=2", "--strategies=async_ps", "--out_dir=" + dir,
                   "--", "--staleness=3"},
                  {"FAKE_WORKER_ASYNC=1"});
  ASSERT_TRUE(out.status.ok()) << out.status;
  EXPECT_THAT(ReadFile(dir + "/compare.md"), HasSubstr("| Async PS (τ=3) "));
  j = json::parse(ReadFile(dir + "/compare.json"));
  const std::string args = j["runs"][1]["finals"][0]["args"].get<std::string>();
  EXPECT_THAT(args, HasSubstr("--staleness=3"));
  EXPECT_THAT(args, Not(HasSubstr("--staleness=2")));
  out = RunBinary("compare",
                  {"--workers=4", "--strategies=hierarchical",
                   "--out_dir=" + dir, "--", "--local_size=2"},
                  {"FAKE_WORKER_ASYNC=1"});
  ASSERT_TRUE(out.status.ok()) << out.status;
  EXPECT_THAT(ReadFile(dir + "/compare.md"),
              HasSubstr("| Hierarchical (2×2) "));
  j = json::parse(ReadFile(dir + "/compare.json"));
  EXPECT_THAT(j["runs"][1]["finals"][0]["args"].get<std::string>(),
              Not(HasSubstr("--staleness")));
}

// NAME@FLAG=VALUE: one strategy at several settings in one sweep, each run
// with its own flag; a flag the strategy does not read is refused.
TEST(CompareTest, OneStrategyAtSeveralSettings) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/taus";
  Outcome out = RunBinary(
      "compare",
      {"--workers=2", "--strategies=async_ps@staleness=0,async_ps@staleness=8",
       "--out_dir=" + dir},
      {"FAKE_WORKER_ASYNC=1"});
  ASSERT_TRUE(out.status.ok()) << out.status;
  const std::string md = ReadFile(dir + "/compare.md");
  // The variant names the staleness; the row does not label it again.
  EXPECT_THAT(md, HasSubstr("| Async PS (τ=0) "));
  EXPECT_THAT(md, HasSubstr("| Async PS (τ=8) "));
  EXPECT_THAT(md, Not(HasSubstr("[staleness=")));
  const json taus = json::parse(ReadFile(dir + "/compare.json"));
  EXPECT_THAT(taus["runs"][2]["finals"][0]["args"].get<std::string>(),
              HasSubstr("--staleness=8"));
  out = RunBinary(
      "compare",
      {"--workers=2", "--strategies=async_ps@local_size=2", "--out_dir=" + dir},
      {"FAKE_WORKER_ASYNC=1"});
  EXPECT_THAT(std::string(out.status.message()),
              HasSubstr("'local_size=2' is not FLAG=VALUE for a flag async_ps "
                        "reads (staleness, chunk_kb, accumulate_steps, "
                        "batch_size, emulated_compute_ms, lr, lr_scaling, "
                        "lr_warmup_steps, momentum, optimizer, precision)"));
  // Training flags per run: the study's two batch sizes, named in the rows.
  out = RunBinary("compare", {"--workers=2",
                              "--strategies=sps@batch_size=8,sps@batch_size=16",
                              "--out_dir=" + dir});
  ASSERT_TRUE(out.status.ok()) << out.status;
  EXPECT_THAT(ReadFile(dir + "/compare.md"), HasSubstr("| SPS [b=8] "));
  EXPECT_THAT(ReadFile(dir + "/compare.md"), HasSubstr("| SPS [b=16] "));
  const json j = json::parse(ReadFile(dir + "/compare.json"));
  EXPECT_THAT(j["runs"][2]["finals"][0]["args"].get<std::string>(),
              HasSubstr("--batch_size=16"));
  // A method's own optimizer, learning rate and momentum, after the
  // workers' flags (so they win), named in the row.
  out = RunBinary("compare",
                  {"--workers=2",
                   "--strategies=sps@optimizer=sgd@lr=0.1@momentum=0.5",
                   "--out_dir=" + dir, "--", "--lr=0.003"});
  ASSERT_TRUE(out.status.ok()) << out.status;
  EXPECT_THAT(ReadFile(dir + "/compare.md"),
              HasSubstr("| SPS [optimizer=sgd, lr=0.1, μ=0.5] "));
  const std::string args = json::parse(ReadFile(dir + "/compare.json"))
                               ["runs"][1]["finals"][0]["args"];
  EXPECT_THAT(args, HasSubstr("--lr=0.003"));
  EXPECT_THAT(args, HasSubstr("--optimizer=sgd --lr=0.1 --momentum=0.5"));
  EXPECT_LT(args.find("--lr=0.003"), args.find("--lr=0.1"));
}

// Another emulated compute per row (a faster precision): NAME@
// emulated_compute_ms=X runs with it, named in the row; baseline@... is a
// reference row of its own, run once at n = 1 beside the plain baseline.
TEST(CompareTest, RowsAtAnotherEmulatedComputeWithTheirOwnBaseline) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/fast";
  const Outcome out = RunBinary(
      "compare",
      {"--workers=2", "--model=synthetic", "--profile=mobilenet_v2",
       "--emulated_compute_ms=20",
       "--strategies=baseline@emulated_compute_ms=5,sps,sps@emulated_"
       "compute_ms=5",
       "--out_dir=" + dir});
  ASSERT_TRUE(out.status.ok()) << out.status;
  const std::string md = ReadFile(dir + "/compare.md");
  EXPECT_THAT(md, HasSubstr("| SPS [compute_ms=5] (emulated) "));
  EXPECT_THAT(md, HasSubstr("| Baseline [compute_ms=5] (emulated) "));
  const json j = json::parse(ReadFile(dir + "/compare.json"));
  ASSERT_EQ(j["runs"].size(), 4u);  // two baselines at n = 1, two sps
  EXPECT_EQ(j["runs"][0]["workers"], 1);
  EXPECT_EQ(j["runs"][1]["workers"], 1);
  EXPECT_EQ(j["runs"][1]["strategy"], "baseline");
  EXPECT_THAT(j["runs"][1]["finals"][0]["args"].get<std::string>(),
              HasSubstr("--emulated_compute_ms=5"));
  EXPECT_EQ(j["runs"][3]["workers"], 2);
  EXPECT_THAT(j["runs"][3]["finals"][0]["args"].get<std::string>(),
              HasSubstr("--emulated_compute_ms=5"));
}

// Straggler ranks a run does not have are left out of it: the baseline
// (n = 1) runs without rank 1's factor, the n = 2 runs with it.
TEST(CompareTest, StragglersReachTheRunsThatHaveTheRank) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/slow";
  const Outcome out = RunBinary(
      "compare", {"--workers=2", "--strategies=sps", "--slow_ranks=1:1.5",
                  "--compute_jitter=0.1", "--out_dir=" + dir});
  ASSERT_TRUE(out.status.ok()) << out.status;
  EXPECT_THAT(ReadFile(dir + "/compare.md"),
              HasSubstr("STRAGGLERS: rank 1 x1.5; jitter ±0.1"));
  const json j = json::parse(ReadFile(dir + "/compare.json"));
  const std::string baseline = j["runs"][0]["finals"][0]["args"];
  const std::string sps = j["runs"][1]["finals"][0]["args"];
  EXPECT_THAT(baseline, Not(HasSubstr("--slow_ranks")));
  EXPECT_THAT(baseline, HasSubstr("--compute_jitter=0.1"));
  EXPECT_THAT(sps, HasSubstr("--slow_ranks=1:1.5"));
}

// Bad training-dynamics flags are refused before any process starts.
TEST(CompareTest, RefusesBadTrainingFlags) {
  struct Case {
    const char* flag;
    const char* message;
  };
  for (const Case& c :
       {Case{"--accumulate_steps=0", "--accumulate_steps must be >= 1"},
        Case{"--lr_scaling=cubic", "unknown learning-rate scaling 'cubic'"},
        Case{"--lr_warmup_steps=-1", "--lr_warmup_steps must be >= 0"},
        Case{"--slow_ranks=2:1.5", "rank 2 is outside [0, 2)"},
        Case{"--slow_ranks=1:0", "rank 1's factor must be > 0"},
        Case{"--compute_jitter=1", "--compute_jitter must be in [0, 1)"}}) {
    const std::string flag = c.flag;
    const Outcome out = RunBinary(
        "compare",
        {flag, "--workers=1,2", "--worker_bin=/no/such/worker",
         "--out_dir=" + std::string(std::getenv("TEST_TMPDIR")) + "/refused"});
    EXPECT_THAT(std::string(out.status.message()), HasSubstr(c.message))
        << flag;
    EXPECT_THAT(std::string(out.status.message()),
                Not(HasSubstr("/no/such/worker")))
        << flag;
  }
}

TEST(CompareTest, HierarchicalRowNamesItsGrouping) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/hier";
  Outcome out = RunBinary(
      "compare",
      {"--workers=2", "--strategies=hierarchical", "--out_dir=" + dir},
      {"FAKE_WORKER_ASYNC=1"});
  ASSERT_TRUE(out.status.ok()) << out.status;
  EXPECT_THAT(ReadFile(dir + "/compare.md"),
              HasSubstr("| Hierarchical (1×2) "));
  out = RunBinary("compare",
                  {"--workers=2", "--strategies=hierarchical",
                   "--out_dir=" + dir, "--", "--local_size=1"},
                  {"FAKE_WORKER_ASYNC=1"});
  ASSERT_TRUE(out.status.ok()) << out.status;
  EXPECT_THAT(ReadFile(dir + "/compare.md"),
              HasSubstr("| Hierarchical (2×1) "));
}

TEST(ComparePresetTest, ExplicitFlagsOverrideThePreset) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/study4";
  // study4 also names ring and fusion, which the fake worker lacks.
  const Outcome out =
      RunBinary("compare", {"--preset=study4", "--strategies=sps,dps",
                            "--steps=3", "--out_dir=" + dir});
  ASSERT_TRUE(out.status.ok()) << out.status;
  const json j = json::parse(ReadFile(dir + "/compare.json"));
  EXPECT_EQ(j["config"]["preset"], "study4");
  EXPECT_EQ(j["config"]["workers"], json({4}));  // from the preset
  EXPECT_EQ(j["config"]["servers"], 4);          // from the preset
  EXPECT_EQ(j["config"]["steps"], 3);            // given: overrides 40
  EXPECT_EQ(j["config"]["strategies"], json({"sps", "dps"}));
  EXPECT_EQ(j["runs"][2]["servers"], 4);
}

TEST(ComparePresetTest, EmulatedPresetIsLabelled) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/comm";
  const Outcome out =
      RunBinary("compare", {"--preset=comm_bound", "--workers=2",
                            "--strategies=sps", "--out_dir=" + dir});
  ASSERT_TRUE(out.status.ok()) << out.status;
  const json j = json::parse(ReadFile(dir + "/compare.json"));
  EXPECT_EQ(j["config"]["model"], "synthetic");
  EXPECT_EQ(j["compute"], "emulated");
  EXPECT_THAT(j["runs"][1]["finals"][0]["args"].get<std::string>(),
              HasSubstr("--model=synthetic"));
  EXPECT_THAT(j["runs"][1]["finals"][0]["args"].get<std::string>(),
              HasSubstr("--profile=gpt2 --emulated_compute_ms=20"));
  const std::string md = ReadFile(dir + "/compare.md");
  EXPECT_THAT(md, HasSubstr("- **Compute:** emulated"));
  EXPECT_THAT(md, HasSubstr("| SPS (emulated)      |"));
  EXPECT_THAT(ReadFile(dir + "/compare.csv"), HasSubstr(",true,cpu,"));
  // The fake's loss of 0.5 is not reported for emulated compute.
  EXPECT_THAT(md, HasSubstr("Val loss: none for runs with emulated compute"));
  EXPECT_THAT(md, Not(HasSubstr("0.5000")));
  EXPECT_TRUE(j["report"]["rows"][1]["eval_loss"].is_null());
}

TEST(ComparePresetTest, GpuStudyOnOneGpuRunsTheBaselinesAndSaysWhatNot) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/gpu";
  // The fake worker lacks fusion and dps; the rest is the preset's.
  const Outcome out = RunBinary(
      "compare",
      {"--preset=study_gpt2_gpu",
       "--strategies=sps,ring,baseline@precision=bf16,ring@precision=bf16",
       "--out_dir=" + dir},
      {"FAKE_WORKER_GPUS=1", "FAKE_WORKER_NCCL=1"});
  ASSERT_TRUE(out.status.ok()) << out.status;
  const json j = json::parse(ReadFile(dir + "/compare.json"));
  EXPECT_EQ(j["config"]["device"], "cuda");
  EXPECT_EQ(j["config"]["gpus"], 1);
  EXPECT_EQ(j["config"]["gpu_per_worker"], true);
  std::vector<std::string> ran, not_run;
  for (const json& run : j["runs"]) {
    const std::string args = run["finals"][0]["args"].get<std::string>();
    ran.push_back(
        run["strategy"].get<std::string>() +
        (args.find("--precision=bf16") != std::string::npos ? " bf16" : ""));
    EXPECT_THAT(args, HasSubstr("--n_layer=12 --n_head=12 --n_embd=768 "
                                "--block_size=1024"));
    EXPECT_THAT(args, HasSubstr("--device=cuda"));
  }
  for (const json& n : j["not_run"]) {
    not_run.push_back(n["parallel_type"].get<std::string>() +
                      " n=" + std::to_string(n["workers"].get<int>()));
  }
  EXPECT_THAT(ran, ::testing::ElementsAre("baseline", "baseline bf16"));
  EXPECT_THAT(not_run, ::testing::ElementsAre("SPS n=4", "Ring n=4",
                                              "Ring [precision=bf16] n=4"));
}

TEST(ComparePresetTest, UnknownPresetListsTheKnownOnes) {
  const Outcome out = RunBinary("compare", {"--preset=nope"});
  EXPECT_THAT(std::string(out.status.message()), HasSubstr("code 2"));
  const std::string message(out.status.message());
  EXPECT_THAT(message, HasSubstr("unknown preset 'nope'; known: "));
  for (const char* known : {"comm_bound", "compute_bound", "study4"}) {
    EXPECT_THAT(message, HasSubstr(known));
  }
}

}  // namespace
}  // namespace ringside

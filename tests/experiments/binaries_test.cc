// End-to-end runs of the `launch` and `compare` binaries against the fake
// ps_server / worker scripts.
#include <errno.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_split.h"
#include "experiments/job/local_job.h"
#include "experiments/job/process_group.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringside {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

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
  // No PyTorch DDP row unless a test asks for the stand-in peer, and the
  // training run alone unless a test asks for timing runs (later flags
  // win).
  if (binary == "compare") {
    spec.argv.push_back("--torch_python=/no/such/python");
    spec.argv.push_back("--repeats=0");
  }
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

TEST(CompareTest, PrintsTableAndWritesFiles) {
  const std::string dir =
      std::string(std::getenv("TEST_TMPDIR")) + "/compare_out";
  const Outcome out =
      RunBinary("compare", {"--workers=2", "--servers=3", "--steps=5",
                            "--out_dir=" + dir, "--model_bandwidth_gbit=8",
                            "--model_latency_us=10", "--nocalibrate"});
  ASSERT_TRUE(out.status.ok()) << out.status;
  std::string table;
  for (const std::string& l : out.stdout_lines) table += l + "\n";
  EXPECT_THAT(table, HasSubstr("## Utilization, n = 2 workers\n\n"
                               "| Parallel type | PrmSrv |  W0 |  W1 | Total"));
  // Fake throughput is 100 * world_size: speedup 2, efficiency 1.
  EXPECT_THAT(table, HasSubstr("| Baseline      |      0 | 80% |   0 |"));
  EXPECT_THAT(table, HasSubstr("| SPS           |      1 | 80% | 70% |  1.50 "
                               "|                  200.0 |    2.00 "
                               "|         1.00 |"));
  EXPECT_THAT(table, HasSubstr("| DPS           |      3 |"));
  EXPECT_THAT(table, HasSubstr("| Scaling eff. | Val loss |\n"));
  // The cost model beside each run: the fake's 4 MB model in 8 tensors,
  // 10 ms compute and 20 ms steps. sps n=2 over 1 GB/s: n·M/B = 8 ms + 2α
  // + the chunk pipeline's 2·n·C/B (C = AutoChunkBytes(M, 1) = 244 KiB:
  // 1.0 ms), a 19.02 ms step (−5%); dps K=3: max(M/B, n·M/(K·B)) = 4 ms
  // + 2α + 2·n·128 KiB/B (0.52 ms).
  EXPECT_THAT(table, HasSubstr("## Cost model vs measured\n\nLink: B = 8.00 "
                               "Gbit/s, α = 10.0 µs (B given; α given)"));
  // t_c is the baseline's compute (the fake's 10 ms); the error is marked
  // not counted (*) where 2 workers and the servers outnumber the cores.
  EXPECT_THAT(table, HasSubstr("| SPS           |   2 |      1 |         sps "
                               "|                   10.00 |               "
                               "19.02 |              20.00 |"));
  EXPECT_THAT(table, ::testing::AnyOf(HasSubstr("20.00 |   -5% |"),
                                      HasSubstr("20.00 |  -5% * |")));
  EXPECT_THAT(table, HasSubstr("| DPS           |   2 |      3 |         dps "
                               "|                   10.00 |               "
                               "14.54 |"));
  EXPECT_THAT(table, HasSubstr("Calibration: none (--nocalibrate): the "
                               "predictions have no CPU terms."));
  EXPECT_THAT(table, HasSubstr("- **Hardware:** "));
  EXPECT_THAT(table, HasSubstr("- **Compute:** real"));
  // 2 workers + 3 servers exceed the cores of most test machines.
  if (std::thread::hardware_concurrency() < 5) {
    EXPECT_THAT(table, HasSubstr("Note: more processes than the"));
    EXPECT_THAT(table, HasSubstr("dps n=2 (2 compute threads + 3 servers)"));
  }
  EXPECT_EQ(ReadFile(dir + "/compare.md"), table);
  EXPECT_THAT(ReadFile(dir + "/compare.csv"),
              HasSubstr("\nsps,SPS,2,1,0.8000,0.7000,1.5000,200.000,2.0000,"
                        "1.0000,0.5,false,cpu,"));
  const json j = json::parse(ReadFile(dir + "/compare.json"));
  EXPECT_EQ(j["report"]["rows"].size(), 3u);
  EXPECT_EQ(j["report"]["workers"], json({2}));
  EXPECT_EQ(j["runs"][2]["servers"], 3);
  EXPECT_EQ(j["runs"][2]["workers"], 2);
  EXPECT_EQ(j["config"]["steps"], 5);
  EXPECT_EQ(j["compute"], "real");
  EXPECT_GT(j["hardware"]["cores"].get<int>(), 0);
  ASSERT_EQ(j["cost_model"]["runs"].size(), 3u);
  // 18.02 ms + the pipeline's 2·2·249856/1e9 s (AutoChunkBytes(4e6, 1)).
  EXPECT_NEAR(j["cost_model"]["runs"][1]["predicted_step_s"].get<double>(),
              0.01802 + 0.000999424, 1e-9);
  EXPECT_NEAR(j["cost_model"]["runs"][1]["error"].get<double>(),
              (0.01802 + 0.000999424 - 0.020) / 0.020, 1e-9);
}

TEST(CompareTest, SweepsWorkerCountsWithPlotsAndResultsPage) {
  const std::string tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = tmp + "/sweep";
  const Outcome out = RunBinary(
      "compare", {"--workers=2,1", "--strategies=sps", "--out_dir=" + dir,
                  "--results_md=" + tmp + "/docs/RESULTS.md"});
  ASSERT_TRUE(out.status.ok()) << out.status;
  const std::string md = ReadFile(dir + "/compare.md");
  EXPECT_THAT(md, HasSubstr("## Utilization, n = 1 worker\n"));
  EXPECT_THAT(md, HasSubstr("## Utilization, n = 2 workers\n"));
  EXPECT_THAT(md, HasSubstr("| SPS            |      1 | 1.00 | 2.00 |"));
  EXPECT_THAT(md, HasSubstr("| Linear (ideal) |      - | 1.00 | 2.00 |"));
  const json j = json::parse(ReadFile(dir + "/compare.json"));
  EXPECT_EQ(j["config"]["workers"], json({1, 2}));
  ASSERT_EQ(j["runs"].size(), 3u);  // baseline, sps n=1, sps n=2
  EXPECT_EQ(j["runs"][1]["workers"], 1);
  EXPECT_EQ(j["runs"][2]["workers"], 2);
  const std::string results = ReadFile(tmp + "/docs/RESULTS.md");
  EXPECT_THAT(results, HasSubstr("## Speedup"));
  if (access("/usr/bin/gnuplot", X_OK) == 0) {
    EXPECT_EQ(j["plots"], json({"utilization_n1.png", "utilization_n2.png",
                                "speedup.png"}));
    EXPECT_THAT(results, HasSubstr("](results/speedup.png)"));
    EXPECT_TRUE(std::filesystem::exists(tmp + "/docs/results/speedup.png"));
    EXPECT_TRUE(
        std::filesystem::exists(tmp + "/docs/results/utilization_n2.png"));
  }
}

// The measurement protocol: every row's training run (--steps, with
// evaluation), then --repeats=3 timing rounds through all rows, the
// baseline in each, each timing run's window sized from its row's training
// step (2 s at it, at least 30 steps) and without evaluation; each row is
// its median timing run with the training run's loss curve. The fake's
// rank 0 takes 20, 30 and 40 ms steps over its successive runs: baseline
// 20, sps 30 (training), then baseline 40, sps 20, baseline 30, sps 40,
// baseline 20, sps 30.
TEST(CompareTest, TimingRunsFollowTheTrainingRunAndKeepTheMedian) {
  const std::string tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = tmp + "/repeats";
  const Outcome out = RunBinary(
      "compare",
      {"--workers=2", "--strategies=sps", "--repeats=3", "--out_dir=" + dir,
       "--model_bandwidth_gbit=8", "--model_latency_us=10", "--nocalibrate",
       "--eval_every=10"},
      {"FAKE_WORKER_COUNTER=" + tmp + "/repeats_counter",
       "FAKE_WORKER_EVAL=1"});
  ASSERT_TRUE(out.status.ok()) << out.status;
  const std::string md = ReadFile(dir + "/compare.md");
  EXPECT_THAT(md, HasSubstr("| Measured step, median run (ms) | Runs: "
                            "fastest–slowest (ms) |"));
  EXPECT_THAT(md, HasSubstr(" 30.00 |       20.00–40.00 (3 runs) |"));
  EXPECT_THAT(md, HasSubstr("Measurement: every row trained once for 40 "
                            "steps"));
  EXPECT_THAT(md, HasSubstr("then ran 3 timing runs without evaluation"));
  EXPECT_THAT(md, HasSubstr("Other processes: at most "));
  const json j = json::parse(ReadFile(dir + "/compare.json"));
  ASSERT_EQ(j["runs"].size(), 8u);
  const json& sps_training = j["runs"][1];
  EXPECT_EQ(sps_training["strategy"], "sps");
  EXPECT_EQ(sps_training["phase"], "training");
  const std::string trained = sps_training["finals"][0]["args"];
  EXPECT_THAT(trained, HasSubstr("--steps=40"));
  EXPECT_THAT(trained, HasSubstr("--eval_every=10"));
  EXPECT_TRUE(sps_training.contains("other_cpu_cores"));
  // sps trained at 30 ms a step: 2 s is 67 steps, after 5 warm-up steps.
  const json& sps_timing = j["runs"][3];
  EXPECT_EQ(sps_timing["strategy"], "sps");
  EXPECT_EQ(sps_timing["phase"], "timing");
  EXPECT_EQ(sps_timing["timing_run"], 1);
  EXPECT_EQ(sps_timing["window_steps"], 67);
  const std::string timed = sps_timing["finals"][0]["args"];
  EXPECT_THAT(timed, HasSubstr("--steps=72 --eval_every=0"));
  // The baseline trained at 20 ms: 100 steps.
  EXPECT_EQ(j["runs"][2]["window_steps"], 100);
  EXPECT_EQ(j["cost_model"]["runs"][1]["measured_step_runs_s"],
            json({0.02, 0.04, 0.03}));
  EXPECT_DOUBLE_EQ(
      j["cost_model"]["runs"][1]["measured_step_s"].get<double>(), 0.03);
  // The loss curve is the training run's (the timing runs have none).
  const std::string curves = ReadFile(dir + "/loss_curves.csv");
  EXPECT_THAT(curves, HasSubstr("sps,"));
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--repeats=-1"},
        std::vector<std::string>{"--min_window_steps=0"},
        std::vector<std::string>{"--min_window_s=-1"}}) {
    std::vector<std::string> args = {"--workers=2", "--out_dir=" + dir + "0"};
    args.insert(args.end(), bad.begin(), bad.end());
    EXPECT_FALSE(RunBinary("compare", args).status.ok()) << bad[0];
  }
}

TEST(CompareTest, DdpRowRunsThePeerOnTheExportedData) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/ddp";
  const Outcome out = RunBinary(
      "compare",
      {"--workers=2", "--strategies=sps", "--out_dir=" + dir,
       "--torch_python=" + Runfile("tests/experiments/fake_torch_python.sh")});
  ASSERT_TRUE(out.status.ok()) << out.status;
  const std::string md = ReadFile(dir + "/compare.md");
  // The stand-in's utilization 0.9 and throughput 150 * n.
  EXPECT_THAT(md, HasSubstr("| PyTorch DDP   |      0 | 90% | 90% |  1.80 "
                            "|                  300.0 |"));
  EXPECT_THAT(md, HasSubstr("PyTorch DDP: torch 0.0-standin"));
  const json j = json::parse(ReadFile(dir + "/compare.json"));
  ASSERT_EQ(j["runs"].size(), 3u);  // baseline, sps, ddp
  const json& ddp = j["runs"][2];
  EXPECT_EQ(ddp["strategy"], "ddp");
  EXPECT_EQ(ddp["servers"], 0);
  const std::string args = ddp["finals"][1]["args"].get<std::string>();
  EXPECT_THAT(args, HasSubstr("--data_dir=" + dir + "/ddp_data_n2"));
  EXPECT_THAT(args, HasSubstr("--master_port=29999"));
  EXPECT_THAT(args, HasSubstr("--steps=40"));
  EXPECT_THAT(ddp["finals"][0]["script"].get<std::string>(),
              HasSubstr("experiments/ddp_peer.py"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/ddp_data_n2/meta.json"));
}

// The DDP row's data is exported once for its training run and once for
// its timing runs (their longer window), which every timing round reads.
TEST(CompareTest, DdpDataIsExportedOnceForEveryRound) {
  const std::string tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = tmp + "/ddp_repeats";
  const Outcome out = RunBinary(
      "compare",
      {"--workers=2", "--strategies=sps", "--repeats=2", "--out_dir=" + dir,
       "--nocalibrate",
       "--torch_python=" + Runfile("tests/experiments/fake_torch_python.sh")},
      {"FAKE_WORKER_EXPORTS=" + tmp + "/ddp_exports"});
  ASSERT_TRUE(out.status.ok()) << out.status;
  const std::vector<std::string> exports =
      absl::StrSplit(ReadFile(tmp + "/ddp_exports"), '\n',
                     absl::SkipEmpty());
  ASSERT_EQ(exports.size(), 2u);
  EXPECT_EQ(exports[0], dir + "/ddp_data_n2");
  EXPECT_THAT(exports[1], testing::StartsWith(dir + "/ddp_data_n2_w"));
  const json j = json::parse(ReadFile(dir + "/compare.json"));
  int ddp_runs = 0;
  for (const json& run : j["runs"]) {
    if (run["strategy"] != "ddp") continue;
    ++ddp_runs;
    const std::string data =
        run["phase"] == "training" ? exports[0] : exports[1];
    EXPECT_THAT(run["finals"][1]["args"].get<std::string>(),
                HasSubstr("--data_dir=" + data + " "));
  }
  EXPECT_EQ(ddp_runs, 3);
}

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
                        "batch_size, lr_scaling, lr_warmup_steps)"));
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

TEST(CompareTest, SaysWhyTheDdpRowIsAbsent) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/noddp";
  const Outcome out = RunBinary(
      "compare", {"--workers=2", "--strategies=sps", "--out_dir=" + dir});
  ASSERT_TRUE(out.status.ok()) << out.status;
  const std::string md = ReadFile(dir + "/compare.md");
  EXPECT_THAT(md, HasSubstr("PyTorch DDP row absent: `/no/such/python -c "
                            "'import torch'` failed"));
  EXPECT_THAT(md, HasSubstr("pip install torch"));
  EXPECT_THAT(md, Not(HasSubstr("| PyTorch DDP ")));
  const json j = json::parse(ReadFile(dir + "/compare.json"));
  EXPECT_EQ(j["runs"].size(), 2u);
}

TEST(CompareTest, MissingGnuplotSkipsPlotsButWritesTables) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/noplot";
  const Outcome out =
      RunBinary("compare", {"--workers=2", "--strategies=sps",
                            "--gnuplot=/no/such/gnuplot", "--out_dir=" + dir});
  ASSERT_TRUE(out.status.ok()) << out.status;
  const std::string md = ReadFile(dir + "/compare.md");
  EXPECT_THAT(md, HasSubstr("Plots skipped: /no/such/gnuplot"));
  EXPECT_THAT(md, HasSubstr("apt-get install gnuplot-nox"));
  EXPECT_THAT(md, HasSubstr("| SPS "));
  EXPECT_THAT(ReadFile(dir + "/compare.csv"), HasSubstr("\nsps,SPS,2,"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/speedup.png"));
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
  // By default the cost model is calibrated after the baseline, for the
  // fake's 4 MB model, and the report says what it measured.
  const json& c = j["cost_model"]["calibration"];
  ASSERT_TRUE(c.is_object()) << j["cost_model"].dump();
  EXPECT_EQ(c["benchmark_bytes"], 4000000);
  EXPECT_GT(c["allreduce_s"].get<double>(), 0);
  EXPECT_GT(c["ps_round_1_s"].get<double>(), 0);
  EXPECT_THAT(ReadFile(dir + "/compare.md"),
              HasSubstr("Calibration (measured on this machine"));
}

TEST(CompareTest, CudaWorkersLeaveOutWhatTheyCannotRun) {
  // The fake worker lists dps as not running on CUDA workers.
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/cuda";
  Outcome out = RunBinary("compare",
                          {"--workers=2", "--device=cuda", "--out_dir=" + dir});
  ASSERT_TRUE(out.status.ok()) << out.status;
  const std::string md = ReadFile(dir + "/compare.md");
  EXPECT_THAT(md, HasSubstr("Not run on CUDA workers: dps (not supported "
                            "(a test))."));
  EXPECT_THAT(md, HasSubstr("| SPS "));
  EXPECT_THAT(md, Not(HasSubstr("| DPS ")));
  // The calibration times CPU paths: none for CUDA workers, and it says so.
  EXPECT_THAT(md, HasSubstr("Calibration: none (the workers ran on cuda"));
  // Named explicitly, it is refused before anything runs.
  out = RunBinary("compare", {"--workers=2", "--device=cuda",
                              "--strategies=dps", "--out_dir=" + dir});
  EXPECT_FALSE(out.status.ok());
}

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
  EXPECT_THAT(md, HasSubstr("\nTarget loss 1.2000 (reached by every run; "
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
            json({{"loss", 1.2}, {"source", "reached by every run"}}));
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

TEST(CompareTest, FailedStrategyIsReportedAndExitCodeIsOne) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/failed";
  const Outcome out = RunBinary("compare", {"--workers=2", "--out_dir=" + dir},
                                {"FAKE_WORKER_FAIL_RANK=1"});
  EXPECT_THAT(std::string(out.status.message()), HasSubstr("code 1"));
  std::string table;
  for (const std::string& l : out.stdout_lines) table += l + "\n";
  EXPECT_THAT(table, HasSubstr("| Baseline"));  // rank 0 only: succeeds
  EXPECT_THAT(table, HasSubstr("Failed: sps n=2: INTERNAL: worker/1"));
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

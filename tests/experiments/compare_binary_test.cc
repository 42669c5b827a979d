// End-to-end runs of the `compare` binary against the fake ps_server /
// worker scripts: its tables and files, the worker sweep, the measurement
// protocol, the DDP row, plots, calibration, CUDA workers and failures.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
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

// --torch_model: the DDP row trains the user's PyTorch model on random
// inputs beside a profile's emulated rows: nothing exported, the model and
// its input shape passed to the peer, and the report saying what to
// compare.
TEST(CompareTest, DdpRowTrainsTheUsersModelBesideTheProfile) {
  const std::string dir =
      std::string(std::getenv("TEST_TMPDIR")) + "/ddp_own_model";
  const Outcome out = RunBinary(
      "compare",
      {"--workers=2", "--strategies=sps", "--model=synthetic",
       "--profile=mobilenet_v2", "--emulated_compute_ms=2",
       "--torch_model=torchvision.models:mobilenet_v2",
       "--torch_input=3,224,224", "--out_dir=" + dir,
       "--torch_python=" + Runfile("tests/experiments/fake_torch_python.sh")});
  ASSERT_TRUE(out.status.ok()) << out.status;
  const json j = json::parse(ReadFile(dir + "/compare.json"));
  const json* ddp = nullptr;
  for (const json& run : j["runs"]) {
    if (run["strategy"] == "ddp") ddp = &run;
  }
  ASSERT_NE(ddp, nullptr);
  const std::string args = (*ddp)["finals"][0]["args"].get<std::string>();
  EXPECT_THAT(args, HasSubstr("--torch_model=torchvision.models:mobilenet_v2 "
                              "--input=3,224,224"));
  EXPECT_THAT(args, Not(HasSubstr("--data_dir")));
  EXPECT_FALSE(std::filesystem::exists(dir + "/ddp_data_n2"));
  const std::string md = ReadFile(dir + "/compare.md");
  EXPECT_THAT(md, HasSubstr("with real compute on random inputs of shape "
                            "(batch, 3,224,224)"));
  EXPECT_THAT(md, HasSubstr("not their throughput or loss"));
}

// --torch_model without a synthetic profile, or without its input shape,
// stops compare with a message naming the flag.
TEST(CompareTest, TorchModelFlagsThatContradictAreRefused) {
  const std::string tmp = std::getenv("TEST_TMPDIR");
  const std::string python =
      "--torch_python=" + Runfile("tests/experiments/fake_torch_python.sh");
  Outcome out = RunBinary("compare", {"--workers=1", "--strategies=sps",
                                      "--torch_model=m:f", "--torch_input=4",
                                      "--out_dir=" + tmp + "/tm1", python});
  EXPECT_FALSE(out.status.ok());
  out = RunBinary("compare",
                  {"--workers=1", "--strategies=sps", "--model=synthetic",
                   "--profile=mobilenet_v2", "--torch_model=m:f",
                   "--out_dir=" + tmp + "/tm2", python});
  EXPECT_FALSE(out.status.ok());
}

// --emulation_scale needs the synthetic model and shaped links; each
// refusal names what was wrong, before any run.
TEST(CompareTest, EmulationScaleIsRefusedWithoutSyntheticModelOrShapedLinks) {
  const std::string tmp = std::getenv("TEST_TMPDIR");
  Outcome out = RunBinary("compare", {"--workers=1", "--strategies=sps",
                                      "--emulation_scale=8",
                                      "--out_dir=" + tmp + "/es1"});
  EXPECT_FALSE(out.status.ok());
  EXPECT_THAT(std::string(out.status.message()), HasSubstr("--emulation_scale=8 needs "
                                    "--model=synthetic"));
  out = RunBinary("compare",
                  {"--workers=1", "--strategies=sps", "--model=synthetic",
                   "--profile=mobilenet_v2", "--emulation_scale=8",
                   "--out_dir=" + tmp + "/es2"});
  EXPECT_FALSE(out.status.ok());
  EXPECT_THAT(std::string(out.status.message()), HasSubstr("--emulation_scale=8 needs shaped links "
                                    "(--link_gbit > 0)"));
  out = RunBinary("compare",
                  {"--workers=1", "--strategies=sps", "--model=synthetic",
                   "--profile=mobilenet_v2", "--emulation_scale=0.5",
                   "--link_gbit=1", "--out_dir=" + tmp + "/es3"});
  EXPECT_FALSE(out.status.ok());
  EXPECT_THAT(std::string(out.status.message()), HasSubstr("--emulation_scale must be a finite "
                                    "number >= 1, got 0.5"));
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

TEST(CompareTest, DefaultSweepLeavesOutTheOptInStrategiesAllRunsThem) {
  const std::string tmp = std::getenv("TEST_TMPDIR");
  auto strategies_of = [](const std::string& dir) {
    std::vector<std::string> names;
    const json j = json::parse(ReadFile(dir + "/compare.json"));
    for (const json& row : j["report"]["rows"]) names.push_back(row["strategy"]);
    return names;
  };
  Outcome out = RunBinary("compare",
                          {"--workers=2", "--repeats=0", "--nocalibrate",
                           "--out_dir=" + tmp + "/default_sweep"},
                          {"FAKE_WORKER_OPT_IN=1"});
  ASSERT_TRUE(out.status.ok()) << out.status;
  EXPECT_THAT(strategies_of(tmp + "/default_sweep"),
              ::testing::ElementsAre("baseline", "sps", "dps"));
  out = RunBinary("compare",
                  {"--workers=2", "--repeats=0", "--nocalibrate",
                   "--strategies=all", "--out_dir=" + tmp + "/all_sweep"},
                  {"FAKE_WORKER_OPT_IN=1"});
  ASSERT_TRUE(out.status.ok()) << out.status;
  EXPECT_THAT(strategies_of(tmp + "/all_sweep"),
              ::testing::ElementsAre("baseline", "sps", "dps", "ring_topk"));
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

TEST(CompareTest, CudaRowsThatNeedMoreGpusThanTheMachineHasAreNotRun) {
  // One GPU: ring (NCCL, a GPU per rank) runs at n = 1 only; sps shares the
  // GPU at n = 2 unless --gpu_per_worker gives every worker its own.
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/gpus";
  const std::vector<std::string> env = {"FAKE_WORKER_GPUS=1",
                                        "FAKE_WORKER_NCCL=1"};
  Outcome out =
      RunBinary("compare",
                {"--workers=1,2", "--device=cuda", "--strategies=sps,ring",
                 "--repeats=0", "--out_dir=" + dir},
                env);
  ASSERT_TRUE(out.status.ok()) << out.status;
  json j = json::parse(ReadFile(dir + "/compare.json"));
  EXPECT_EQ(j["config"]["gpus"], 1);
  ASSERT_EQ(j["not_run"].size(), 1u) << j["not_run"].dump();
  EXPECT_EQ(j["not_run"][0]["strategy"], "ring");
  EXPECT_EQ(j["not_run"][0]["workers"], 2);
  EXPECT_EQ(j["not_run"][0]["gpus_needed"], 2);
  EXPECT_THAT(ReadFile(dir + "/compare.md"),
              HasSubstr("Not run for want of GPUs: Ring n=2 (needs 2 GPUs "
                        "(one per worker: NCCL needs a distinct GPU per "
                        "rank); this machine's workers see 1)."));
  std::vector<std::string> ran;
  for (const json& run : j["runs"]) {
    ran.push_back(run["strategy"].get<std::string>() +
                  " n=" + std::to_string(run["workers"].get<int>()));
  }
  EXPECT_THAT(ran, ::testing::UnorderedElementsAre("baseline n=1", "sps n=1",
                                                   "ring n=1", "sps n=2"));

  out = RunBinary("compare",
                  {"--workers=1,2", "--device=cuda", "--strategies=sps,ring",
                   "--repeats=0", "--gpu_per_worker", "--out_dir=" + dir},
                  env);
  ASSERT_TRUE(out.status.ok()) << out.status;
  j = json::parse(ReadFile(dir + "/compare.json"));
  ASSERT_EQ(j["not_run"].size(), 2u) << j["not_run"].dump();
  EXPECT_EQ(j["not_run"][0]["strategy"], "sps");
  EXPECT_THAT(j["not_run"][0]["reason"].get<std::string>(),
              HasSubstr("--gpu_per_worker"));

  // On CPU workers the flag means nothing: refused, naming it.
  out = RunBinary("compare",
                  {"--workers=1", "--gpu_per_worker", "--out_dir=" + dir});
  EXPECT_FALSE(out.status.ok());
  EXPECT_THAT(std::string(out.status.message()),
              HasSubstr("--gpu_per_worker gives every CUDA worker a GPU of "
                        "its own, but the workers run on --device=cpu"));

  // No GPU at all: refused before anything runs, saying why.
  out =
      RunBinary("compare", {"--workers=1", "--device=cuda", "--out_dir=" + dir},
                {"FAKE_WORKER_GPUS=0"});
  EXPECT_FALSE(out.status.ok());
  const std::string err(out.status.message());  // with stderr's last lines
  EXPECT_THAT(err, HasSubstr("the workers see no GPU"));
  EXPECT_THAT(err, HasSubstr("no GPU here (a test)"));
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

}  // namespace
}  // namespace ringside

// Smoke test of the `predict` binary: it runs, prints the tables, writes
// --json_out, and exits 2 with a clear message on bad flags.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringside {
namespace {

using ::testing::HasSubstr;

struct PredictRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

PredictRun RunPredict(const std::string& args) {
  const std::string cmd =
      absl::StrCat(std::getenv("TEST_SRCDIR"), "/ringside/experiments/predict ",
                   args, " 2>&1");
  PredictRun run;
  std::FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 4096> buffer;
  size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    run.output.append(buffer.data(), n);
  }
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

std::string TempPath(const std::string& name) {
  return absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
}

TEST(PredictBinaryTest, DefaultProfilePrintsTablesAndWritesJson) {
  const std::string json_path = TempPath("predict.json");
  const PredictRun run = RunPredict("--max_workers=8 --json_out=" + json_path);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("model resnet50"));
  EXPECT_THAT(run.output, HasSubstr("T = 161 tensors"));
  EXPECT_THAT(run.output, HasSubstr("| ring     |     8 |"));
  EXPECT_THAT(run.output, HasSubstr("| dps      |     8 |"));

  std::ifstream in(json_path);
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str());
  EXPECT_EQ(j["model"], "resnet50");
  // ResNet-50: 25,557,032 float32 parameters.
  EXPECT_EQ(j["inputs"]["model_bytes"].get<double>(), 4.0 * 25557032);
  EXPECT_EQ(j["inputs"]["num_tensors"], 161);
  // baseline once + 17 strategies × n ∈ {1, 2, 4, 8}.
  EXPECT_EQ(j["predictions"].size(), 69u);
  // ring_powersgd reads the profile's shapes: its factors at the study's
  // rank (4, its formula's study flags, which predict takes) move a
  // small share of ring's bytes (the convolutions' 4-D kernels as
  // matrices, the biases and norms whole).
  double ring_s = 0, powersgd_s = 0;
  for (const nlohmann::json& p : j["predictions"]) {
    if (p["workers"] != 8) continue;
    if (p["strategy"] == "ring") ring_s = p["bandwidth_s"].get<double>();
    if (p["strategy"] == "ring_powersgd") {
      powersgd_s = p["bandwidth_s"].get<double>();
    }
  }
  EXPECT_GT(ring_s, 0);
  EXPECT_GT(powersgd_s, 0);
  EXPECT_LT(powersgd_s, 0.2 * ring_s);
  EXPECT_EQ(j["inputs"]["optimizer_state_per_param"], 1.0);  // momentum
  EXPECT_THAT(run.output, HasSubstr("| zero3    |     8 |"));
}

TEST(PredictBinaryTest, MemoryColumnsFollowTheOptimizer) {
  // P = 1e9 B; Adam (s = 2), n = 4, K = 2: ring 4P = 4000 MB, zero1 2P +
  // 2P/4 = 2500 MB, zero2 P + 3P/4 = 1750 MB, dps 2P per worker and
  // 4P/2 = 2000 MB per server.
  const PredictRun run = RunPredict(
      "--profile= --model_bytes=1000000000 --tensors=10 --max_workers=4 "
      "--servers=2 --optimizer=adam --strategies=ring,zero1,zero2,dps");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("optimizer state s = 2 per parameter"));
  EXPECT_THAT(run.output, HasSubstr("Mem/worker (MB)"));
  EXPECT_THAT(run.output, HasSubstr("|          4000.0 |               - |"));
  EXPECT_THAT(run.output, HasSubstr("|          2500.0 |               - |"));
  EXPECT_THAT(run.output, HasSubstr("|          1750.0 |               - |"));
  EXPECT_THAT(run.output, HasSubstr("|          2000.0 |          2000.0 |"));
  // Plain SGD keeps no state: ring holds 2P.
  const PredictRun sgd = RunPredict(
      "--profile= --model_bytes=1000000000 --tensors=10 --max_workers=1 "
      "--momentum=0 --strategies=ring");
  EXPECT_THAT(sgd.output, HasSubstr("|          2000.0 |               - |"));
  const PredictRun bad = RunPredict("--optimizer=rmsprop");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("unknown optimizer type 'rmsprop'"));
}

TEST(PredictBinaryTest, ExplicitModelMatchesTheHandWorkedRing) {
  // M = 1e9 B, B = 8 Gbit/s = 1e9 B/s, α = 1 ms, T = 10, t_c = 1 s, n = 4:
  // ring step = 1 + 1.5 + 0.06 = 2.56 s.
  const PredictRun run = RunPredict(
      "--profile= --model_bytes=1000000000 --tensors=10 --compute_ms=1000 "
      "--link_gbit=8 --link_latency_us=1000 --max_workers=4 "
      "--strategies=ring");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("| ring     |     4 |  2560.000 |"));
  EXPECT_THAT(run.output, HasSubstr("model explicit"));
}

// The deprecated names of --link_gbit and --link_latency_us still work,
// with a note; an old and a new name together are refused.
TEST(PredictBinaryTest, DeprecatedLinkFlagsAreAliases) {
  const PredictRun run = RunPredict(
      "--profile= --model_bytes=1000000000 --tensors=10 --compute_ms=1000 "
      "--bandwidth_gbps=8 --latency_us=1000 --max_workers=4 "
      "--strategies=ring");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("| ring     |     4 |  2560.000 |"));
  EXPECT_THAT(run.output,
              HasSubstr("--bandwidth_gbps is deprecated; use --link_gbit"));
  const PredictRun both = RunPredict("--bandwidth_gbps=8 --link_gbit=10");
  EXPECT_EQ(both.exit_code, 2) << both.output;
  EXPECT_THAT(both.output, HasSubstr("give one of them, not both"));
}

// With a profile the overlap comes from its tensors' proportional ready
// schedule: ring hides part of its all-reduces behind backward, so its
// step is shorter than with the schedule off (--ready_schedule=none, o = 0).
TEST(PredictBinaryTest, ProfilesCarryTheirReadySchedule) {
  const std::string flags =
      "--profile=resnet50 --compute_ms=100 --link_gbit=10 "
      "--max_workers=4 --strategies=ring ";
  const PredictRun with = RunPredict(flags + "--json_out=/dev/stdout");
  ASSERT_EQ(with.exit_code, 0) << with.output;
  EXPECT_THAT(with.output, HasSubstr("proportional ready schedule"));
  const PredictRun without = RunPredict(flags + "--ready_schedule=none");
  ASSERT_EQ(without.exit_code, 0) << without.output;
  EXPECT_THAT(without.output, HasSubstr("overlap o = 0.00 of compute"));
  // ring at n = 4: 2·3/4 · 102.2 MB at 1.25 GB/s = 122.7 ms of bytes; none
  // hidden without the schedule.
  EXPECT_THAT(without.output, HasSubstr("| ring     |     4 |   222."));
  EXPECT_THAT(with.output, Not(HasSubstr("| ring     |     4 |   222.")));
  const PredictRun bad = RunPredict("--ready_schedule=sometimes");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("--ready_schedule must be"));
}

TEST(PredictBinaryTest, BadFlagsExitTwoWithTheReason) {
  PredictRun run = RunPredict("--servers=0");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("servers (K) must be >= 1"));

  run = RunPredict("--link_gbit=0");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("bandwidth (B) must be > 0"));

  run = RunPredict("--profile=alexnet");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("resnet50"));  // lists the known ones

  run = RunPredict("--profile=");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("--model_bytes"));

  run = RunPredict("--max_workers=0");
  EXPECT_EQ(run.exit_code, 2) << run.output;

  run = RunPredict("--strategies=ring,allgather");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("unknown strategy 'allgather'"));
}

TEST(PredictBinaryTest, UnwritableJsonOutExitsOne) {
  const PredictRun run =
      RunPredict("--max_workers=2 --json_out=/nonexistent/x.json");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("cannot write /nonexistent/x.json"));
}

// Every shipped cluster file predicts: the crossover per n up to its GPUs
// and the study-format tables, saying the model is not calibrated. On 16
// nodes x 8 GPUs at 100 Gbit/s, 128 GPUs cross the inter-node link.
TEST(PredictBinaryTest, ClusterFilesPrintTheCrossoverAndTheTables) {
  const std::string dir =
      absl::StrCat(std::getenv("TEST_SRCDIR"), "/ringside/experiments/clusters/");
  for (const char* name :
       {"pcie_1x4", "nvlink_1x4", "nodes16x8_25g", "nodes16x8_100g",
        "nodes16x8_400g"}) {
    const PredictRun run =
        RunPredict(absl::StrCat("--cluster=", dir, name, ".cluster"));
    ASSERT_EQ(run.exit_code, 0) << name << ": " << run.output;
    EXPECT_THAT(run.output, HasSubstr("## Crossover: the fastest strategy per n"))
        << name;
    EXPECT_THAT(run.output, HasSubstr("Calibration: none")) << name;
    EXPECT_THAT(run.output, HasSubstr("| Parallel type | PrmSrv | Util/worker"))
        << name;
  }
  const PredictRun big =
      RunPredict(absl::StrCat("--cluster=", dir, "nodes16x8_100g.cluster"));
  EXPECT_THAT(big.output, HasSubstr("| 128 | inter-node |"));
  EXPECT_THAT(big.output,
              HasSubstr("### n = 128 workers (16 nodes, inter-node link)"));
  // Ranked among the exact strategies; the lossy and stale ones apart.
  EXPECT_THAT(big.output, HasSubstr("| fastest (exact) |"));
  EXPECT_THAT(big.output, HasSubstr("stale (τ=2)"));
  const PredictRun small =
      RunPredict(absl::StrCat("--cluster=", dir, "nvlink_1x4.cluster"));
  EXPECT_THAT(small.output, HasSubstr("| 4 | intra-node |"));
  EXPECT_THAT(small.output, Not(HasSubstr("| 8 |")));
}

// --calibration adds a compare run's measured CPU costs: ring at n = 4
// moves 2·3/4 · 1e9 B, so an all-reduce CPU cost of 1e-10 s/B (0.15 s)
// and 10 all-reduces of 2·3 ring steps of 1 ms (0.06 s) run inside its
// 1.5 s on the link, the hand-worked 2.56 s; a slower wire shows them
// once they outlast it; a file without a calibration is refused, naming it.
TEST(PredictBinaryTest, CalibrationFromACompareRunAddsItsCpuCosts) {
  const std::string path = TempPath("compare.json");
  {
    std::ofstream out(path);
    out << R"({"hardware": {"cpu_model": "Test CPU"}, "cost_model":
              {"calibration": {"allreduce_byte_s": 1e-10,
               "half_allreduce_byte_s": 0, "reduce_scatter_byte_s": 0,
               "allgather_byte_s": 0, "collective_step_s": 0.001,
               "ps_worker_byte_s": 0, "ps_server_byte_s": 0,
               "ps_round_s": 0, "cores": 2}}})";
  }
  const std::string ring =
      "--profile= --model_bytes=1000000000 --tensors=10 --compute_ms=1000 "
      "--link_gbit=8 --link_latency_us=1000 --max_workers=4 "
      "--strategies=ring --ring_bucket_kb=0 ";
  const PredictRun run = RunPredict(ring + "--calibration=" + path);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  // t_c 1 s + 1.5 s on the link (the 0.15 s of summing and the 60 ms of
  // ring steps run inside it) + the 10 calls' 60 ms of α.
  EXPECT_THAT(run.output, HasSubstr("| ring     |     4 |  2560.000 |"));
  EXPECT_THAT(run.output,
              HasSubstr("the per-byte CPU terms and the collectives' ring "
                        "steps run while the bytes are on it, and the slower "
                        "of the two counts"));
  // At 800 Gbit/s the link takes 15 ms, the CPU work 210 ms: it counts.
  const PredictRun fast =
      RunPredict(absl::StrCat(ring, "--calibration=", path,
                              " --link_gbit=800"));
  ASSERT_EQ(fast.exit_code, 0) << fast.output;
  EXPECT_THAT(fast.output, HasSubstr("| ring     |     4 |  1270.000 |"));
  EXPECT_THAT(run.output, HasSubstr("Calibration: from " + path +
                                    " (measured on Test CPU)"));
  // The calibrated machine's 2 cores do not limit the cluster's processes.
  EXPECT_THAT(run.output, HasSubstr("\"cores\":0"));
  EXPECT_THAT(run.output,
              HasSubstr("Its machine's 2 cores do not limit the predicted "
                        "processes"));
  EXPECT_THAT(RunPredict(ring).output, HasSubstr("Calibration: none"));

  const std::string bare = TempPath("bare.json");
  {
    std::ofstream out(bare);
    out << R"({"cost_model": {"calibration": null}})";
  }
  const PredictRun refused = RunPredict(ring + "--calibration=" + bare);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.output, HasSubstr("no cost_model.calibration"));
}

// A malformed file is refused with the line and the field at fault.
TEST(PredictBinaryTest, MalformedClusterFileIsRefused) {
  const std::string path = TempPath("bad.cluster");
  {
    std::ofstream out(path);
    out << "nodes = 2\ngpus_per_node = many\n";
  }
  const PredictRun run = RunPredict("--cluster=" + path);
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr("bad.cluster:2: field 'gpus_per_node': 'many' is not "
                        "an integer"));
}

}  // namespace
}  // namespace ringside

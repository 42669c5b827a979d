// examples/custom_strategy's allgather_average, a strategy built outside
// the tree: it registers by linking alone, meets the equivalence oracle at
// N = 1-3, and runs under launch and compare through the worker binary
// its package builds (ringside_worker), with no edit to ringside.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "experiments/job/process_group.h"
#include "tests/testing/oracle_harness.h"

namespace ringside::testing {
namespace {

std::string Runfile(const std::string& path) {
  return absl::StrCat(std::getenv("TEST_SRCDIR"), "/ringside/", path);
}

// The example's own worker, for launch and compare.
const std::vector<std::string> WorkerBinaries() {
  return {"--worker_bin=" + Runfile("examples/custom_strategy/worker"),
          "--ps_server_bin=" + Runfile("server/ps_server")};
}

const std::vector<std::string> kModel = {
    "--mlp_widths=16,32,8", "--train_examples=512", "--eval_examples=64"};

// Runs `tool` (a runfile path) with `args`; its stdout lines.
absl::Status RunTool(const std::string& tool, std::vector<std::string> args,
                     std::vector<std::string>* lines) {
  ProcessGroupOptions options;
  options.deadline = absl::Seconds(120);
  ProcessGroup group(options);
  ChildSpec child;
  child.label = tool;
  child.argv = {Runfile(tool)};
  child.argv.insert(child.argv.end(), args.begin(), args.end());
  child.on_stdout_line = [lines](const std::string&, absl::string_view line) {
    lines->emplace_back(line);
  };
  absl::StatusOr<int> id = group.Start(std::move(child));
  if (!id.ok()) return id.status();
  return group.Wait();
}

class CustomStrategyOracleTest : public ::testing::TestWithParam<int> {};

TEST_P(CustomStrategyOracleTest, MatchesSingleWorkerWithGlobalBatch) {
  const int n = GetParam();
  OracleSetup setup;
  absl::StatusOr<TrainResult> reference = RunReference(setup, n);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::StatusOr<OracleRun> run = RunWorkers(setup, "allgather_average", n);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(MatchesReference(*run, *reference));
}

INSTANTIATE_TEST_SUITE_P(Workers, CustomStrategyOracleTest,
                         ::testing::Values(1, 2, 3));

TEST(CustomStrategyTest, LaunchRunsItThroughItsOwnWorker) {
  std::vector<std::string> args = WorkerBinaries();
  for (const char* arg : {"--strategy=allgather_average", "--workers=2",
                          "--steps=8", "--", "--warmup_steps=2"}) {
    args.push_back(arg);
  }
  args.insert(args.end(), kModel.begin(), kModel.end());
  std::vector<std::string> lines;
  const absl::Status s = RunTool("experiments/launch", args, &lines);
  ASSERT_TRUE(s.ok()) << s;
  int finals = 0;
  for (const std::string& line : lines) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || j.value("event", "") != "final") continue;
    ++finals;
    EXPECT_EQ(j["strategy"], "allgather_average") << line;
    // N - 1 copies of the 16x32 + 32 + 32x8 + 8 floats out, as many in.
    EXPECT_GT(j["bytes_sent"].get<double>(), 0) << line;
  }
  EXPECT_EQ(finals, 2);
}

TEST(CustomStrategyTest, CompareShowsItsRow) {
  const std::string dir =
      absl::StrCat(std::getenv("TEST_TMPDIR"), "/compare_custom");
  std::vector<std::string> args = WorkerBinaries();
  for (const std::string& arg :
       {std::string("--workers=2"), std::string("--strategies=allgather_average"),
        std::string("--repeats=0"), std::string("--nocalibrate"),
        std::string("--torch_python=/no/such/python"),
        std::string("--steps=12"), "--out_dir=" + dir, std::string("--")}) {
    args.push_back(arg);
  }
  args.insert(args.end(), kModel.begin(), kModel.end());
  std::vector<std::string> lines;
  const absl::Status s = RunTool("examples/custom_strategy/compare", args, &lines);
  ASSERT_TRUE(s.ok()) << s;
  std::ifstream in(dir + "/compare.md");
  std::stringstream md;
  md << in.rdbuf();
  EXPECT_NE(md.str().find("AllGather avg"), std::string::npos) << md.str();
  // Predicted by its own formula, linked into this compare.
  EXPECT_NE(md.str().find("| allgather_average |"), std::string::npos)
      << md.str();
  EXPECT_NE(md.str().find("(2 + s + n)"), std::string::npos) << md.str();
}

TEST(CustomStrategyTest, PredictGivesItsColumnFromItsOwnFormula) {
  std::vector<std::string> lines;
  const absl::Status s = RunTool(
      "examples/custom_strategy/predict",
      {"--profile=gpt2", "--compute_ms=100", "--link_gbit=10"}, &lines);
  ASSERT_TRUE(s.ok()) << s;
  const std::string out = absl::StrJoin(lines, "\n");
  EXPECT_NE(out.find("allgather_average"), std::string::npos) << out;
  EXPECT_NE(out.find("(2 + s + n)"), std::string::npos) << out;  // memory
}

}  // namespace
}  // namespace ringside::testing

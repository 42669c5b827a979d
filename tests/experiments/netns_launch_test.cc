// End to end: `launch --link_gbit=... --link_latency_us=...` with the real
// ps_server and worker runs every process in its own network namespace,
// succeeds, and leaves no namespace behind, also when launch is killed
// mid-job (the guardian deletes them). Without the privileges the job must
// still succeed, on loopback, saying so.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "experiments/job/process_group.h"

namespace ringside {
namespace {

using nlohmann::json;

std::string Runfile(const std::string& path) {
  return absl::StrCat(std::getenv("TEST_SRCDIR"), "/ringside/", path);
}

const std::vector<std::string> kWorkerArgs = {
    "--mlp_widths=16,32,8", "--warmup_steps=1", "--train_examples=512",
    "--eval_examples=64"};

// launch's command line (stderr merged into stdout by sh).
std::vector<std::string> LaunchArgv(const std::string& strategy, int steps) {
  std::vector<std::string> argv = {
      "/bin/sh",
      "-c",
      "exec \"$0\" \"$@\" 2>&1",
      Runfile("experiments/launch"),
      "--worker_bin=" + Runfile("worker/worker"),
      "--ps_server_bin=" + Runfile("server/ps_server"),
      "--strategy=" + strategy,
      "--workers=2",
      absl::StrCat("--steps=", steps),
      "--link_gbit=1",
      "--link_latency_us=50",
      "--"};
  argv.insert(argv.end(), kWorkerArgs.begin(), kWorkerArgs.end());
  return argv;
}

// Our namespaces that exist now.
std::set<std::string> RsnetNamespaces() {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/run/netns", ec)) {
    const std::string name = e.path().filename().string();
    if (absl::StartsWith(name, "rsnet-")) names.insert(name);
  }
  return names;
}

std::set<std::string> Minus(const std::set<std::string>& a,
                            const std::set<std::string>& b) {
  std::set<std::string> out;
  for (const std::string& x : a) {
    if (b.count(x) == 0) out.insert(x);
  }
  return out;
}

class NetnsLaunchTest : public ::testing::TestWithParam<const char*> {};

TEST_P(NetnsLaunchTest, RunsShapedAndCleansUp) {
  const std::string strategy = GetParam();
  const std::set<std::string> before = RsnetNamespaces();
  ProcessGroupOptions options;
  options.deadline = absl::Seconds(120);
  ProcessGroup group(options);
  ChildSpec child;
  child.label = "launch";
  child.argv = LaunchArgv(strategy, 3);
  std::vector<std::string> lines;
  child.on_stdout_line = [&lines](const std::string&, absl::string_view line) {
    lines.emplace_back(line);
  };
  ASSERT_TRUE(group.Start(child).ok());
  const absl::Status status = group.Wait();
  std::string all;
  for (const std::string& l : lines) absl::StrAppend(&all, l, "\n");
  ASSERT_TRUE(status.ok()) << status << "\n" << all;

  int finals = 0;
  std::string network;
  for (const std::string& line : lines) {
    const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.value("event", "") == "final") ++finals;
    if (absl::StartsWith(line, "launch: network: ")) network = line;
  }
  EXPECT_EQ(finals, 2) << all;
  ASSERT_FALSE(network.empty()) << all;
  EXPECT_TRUE(Minus(RsnetNamespaces(), before).empty());
  if (absl::StrContains(network, "network shaping unavailable")) {
    EXPECT_TRUE(absl::StrContains(
        all, "launch: warning: network shaping unavailable: "));
    EXPECT_TRUE(absl::StrContains(all, "; ran on loopback"));
    if (geteuid() != 0) return;  // expected: the job ran on loopback
    GTEST_SKIP() << "root, but namespaces not permitted here: " << network;
  }
  EXPECT_TRUE(
      absl::StartsWith(network, "launch: network: netns: 1 Gbit/s links, "))
      << network;
}

INSTANTIATE_TEST_SUITE_P(Strategies, NetnsLaunchTest,
                         ::testing::Values("sps", "ring"));

TEST(NetnsLaunchKillTest, KilledLaunchLeavesNoNamespace) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root for namespaces";
  const std::set<std::string> before = RsnetNamespaces();
  ProcessGroupOptions options;
  options.deadline = absl::Seconds(120);
  options.kill_grace = absl::Seconds(5);
  ProcessGroup group(options);
  ChildSpec child;
  child.label = "launch";
  child.argv = LaunchArgv("sps", 1000000);
  bool stepping = false;
  std::string all;
  child.on_stdout_line = [&](const std::string&, absl::string_view line) {
    absl::StrAppend(&all, line, "\n");
    const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.value("event", "") == "step") stepping = true;
  };
  ASSERT_TRUE(group.Start(child).ok());
  absl::StatusOr<bool> up =
      group.RunUntil([&] { return stepping; }, absl::Seconds(60));
  ASSERT_TRUE(up.ok()) << up.status() << "\n" << all;
  ASSERT_TRUE(*up) << all;
  const std::set<std::string> ours = Minus(RsnetNamespaces(), before);
  if (ours.empty() && absl::StrContains(all, "network shaping unavailable")) {
    GTEST_SKIP() << "namespaces not permitted here:\n" << all;
  }
  EXPECT_EQ(ours.size(), 4u);  // hub, s0, w0, w1

  // SIGTERM: launch dies without running a destructor, like SIGKILL.
  group.Shutdown();
  const absl::Time until = absl::Now() + absl::Seconds(20);
  std::set<std::string> left = ours;
  while (!left.empty() && absl::Now() < until) {
    absl::SleepFor(absl::Milliseconds(100));
    left = Minus(ours, Minus(ours, RsnetNamespaces()));  // ours still here
  }
  EXPECT_TRUE(left.empty()) << "left behind: " << *left.begin();
}

}  // namespace
}  // namespace ringside

#include "experiments/job/process_group.h"

#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringside {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A child running `script` under /bin/sh whose stdout lines go to `lines`.
ChildSpec Shell(const std::string& label, const std::string& script,
                std::vector<std::string>* lines = nullptr) {
  ChildSpec spec;
  spec.label = label;
  spec.argv = {"/bin/sh", "-c", script};
  if (lines != nullptr) {
    spec.on_stdout_line = [lines](const std::string&, absl::string_view l) {
      lines->emplace_back(l);
    };
  }
  return spec;
}

ProcessGroupOptions FastOptions() {
  ProcessGroupOptions options;
  options.deadline = absl::Seconds(20);
  options.kill_grace = absl::Seconds(1);
  return options;
}

TEST(ProcessGroupTest, SuccessfulChildDeliversItsLines) {
  ProcessGroup group(FastOptions());
  std::vector<std::string> lines;
  ASSERT_TRUE(
      group
          .Start(Shell("ok", "echo hello; echo to-stderr >&2; printf 'a\\nb'",
                       &lines))
          .ok());
  ASSERT_TRUE(group.Wait().ok());
  EXPECT_THAT(lines, ElementsAre("hello", "a", "b"));
  EXPECT_TRUE(group.exited(0));
  EXPECT_EQ(group.exit_code(0), 0);
  EXPECT_TRUE(group.RunningLabels().empty());
}

TEST(ProcessGroupTest, PassesEnvironmentAndClosesStdin) {
  ProcessGroup group(FastOptions());
  std::vector<std::string> lines;
  ChildSpec spec = Shell("env", "cat; echo \"$RS_TEST_VAR\"", &lines);
  spec.env = {"RS_TEST_VAR=forty-two"};
  ASSERT_TRUE(group.Start(std::move(spec)).ok());
  ASSERT_TRUE(group.Wait().ok());
  EXPECT_THAT(lines, ElementsAre("forty-two"));
}

TEST(ProcessGroupTest, FailingChildFailsFastAndKillsSleepingSibling) {
  ProcessGroup group(FastOptions());
  const absl::Time start = absl::Now();
  // `sleep` runs as a grandchild of sh: the whole process group must go.
  ASSERT_TRUE(group.Start(Shell("sleeper", "sleep 30; echo late")).ok());
  ASSERT_TRUE(
      group.Start(Shell("failer", "echo 'bad thing happened' >&2; exit 7"))
          .ok());
  const absl::Status status = group.Wait();
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(status.message()), HasSubstr("failer"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("code 7"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("bad thing happened"));
  EXPECT_THAT(std::string(status.message()),
              ::testing::Not(HasSubstr("sleeper")));
  EXPECT_TRUE(group.exited(0));
  EXPECT_TRUE(group.exited(1));
  EXPECT_EQ(group.exit_code(1), 7);
}

TEST(ProcessGroupTest, ChildKilledBySignalIsAFailure) {
  ProcessGroup group(FastOptions());
  ASSERT_TRUE(group.Start(Shell("victim", "kill -9 $$")).ok());
  const absl::Status status = group.Wait();
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(status.message()), HasSubstr("victim"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("signal 9"));
  EXPECT_EQ(group.exit_code(0), -9);
}

TEST(ProcessGroupTest, DeadlineKillsHangingChild) {
  ProcessGroupOptions options = FastOptions();
  options.deadline = absl::Milliseconds(300);
  ProcessGroup group(options);
  const absl::Time start = absl::Now();
  ASSERT_TRUE(group.Start(Shell("quick", "exit 0")).ok());
  ASSERT_TRUE(group.Start(Shell("hanger", "sleep 30")).ok());
  const absl::Status status = group.Wait();
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("still running: hanger"));
  EXPECT_TRUE(group.exited(1));
}

TEST(ProcessGroupTest, ShutdownEscalatesToSigkill) {
  ProcessGroupOptions options = FastOptions();
  options.kill_grace = absl::Milliseconds(200);
  ProcessGroup group(options);
  // Ignoring SIGTERM is inherited by the sleep, too.
  ASSERT_TRUE(group.Start(Shell("stubborn", "trap '' TERM; sleep 30")).ok());
  // RunUntil's own timeout kills nothing.
  absl::StatusOr<bool> done = group.RunUntil(nullptr, absl::Milliseconds(100));
  ASSERT_TRUE(done.ok());
  EXPECT_FALSE(*done);
  EXPECT_THAT(group.RunningLabels(), ElementsAre("stubborn"));
  const absl::Time start = absl::Now();
  EXPECT_THAT(group.Shutdown(), ElementsAre("stubborn"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  EXPECT_TRUE(group.exited(0));
  EXPECT_EQ(group.exit_code(0), -9);
  // Shut down by us: not a failure, and no more starts.
  EXPECT_TRUE(group.Wait().ok());
  EXPECT_EQ(group.Start(Shell("late", "exit 0")).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(ProcessGroupTest, RunUntilStopsWhenPredicateHolds) {
  ProcessGroup group(FastOptions());
  std::vector<std::string> lines;
  ASSERT_TRUE(
      group.Start(Shell("talker", "echo ready; sleep 30", &lines)).ok());
  absl::StatusOr<bool> done =
      group.RunUntil([&] { return !lines.empty(); }, absl::Seconds(5));
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(*done);
  EXPECT_FALSE(group.exited(0));
  // The destructor shuts the sleeper down.
}

TEST(ProcessGroupTest, MissingProgramFailsToStart) {
  ProcessGroup group(FastOptions());
  ChildSpec spec;
  spec.label = "ghost";
  spec.argv = {"/nonexistent/ringside-binary"};
  const absl::StatusOr<int> id = group.Start(std::move(spec));
  EXPECT_EQ(id.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(id.status().message()), HasSubstr("ghost"));
  EXPECT_EQ(group.size(), 0);
}

}  // namespace
}  // namespace ringside

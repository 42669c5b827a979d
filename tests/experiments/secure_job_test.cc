// Secure jobs as real processes: `launch` runs a TLS job with a token it
// generates (and deletes afterwards); a worker with a wrong or no token is
// refused by the parameter server with a message saying so; bad security
// flags fail fast naming the flag and file. (The oracle over token + TLS is
// in processes_test.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "experiments/job/process_group.h"
#include "tests/testing/test_pki.h"

namespace ringside {
namespace {

using ::testing::HasSubstr;

std::string Runfile(const std::string& path) {
  return absl::StrCat(std::getenv("TEST_SRCDIR"), "/ringside/", path);
}

std::string TmpFile(const std::string& name) {
  return absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
}

const TestPki& Pki() {
  static const TestPki* pki = [] {
    absl::StatusOr<TestPki> made = MakeTestPki(TmpFile("pki"));
    if (!made.ok()) {
      std::fprintf(stderr, "%s\n", made.status().ToString().c_str());
      std::abort();
    }
    return new TestPki(*made);
  }();
  return *pki;
}

const std::vector<std::string> kModel = {
    "--mlp_widths=16,32,8", "--train_examples=512", "--eval_examples=64",
    "--chunk_kb=1", "--warmup_steps=1"};

ProcessGroupOptions Quiet(absl::Duration deadline) {
  ProcessGroupOptions options;
  options.deadline = deadline;
  options.relay_stderr = false;
  options.stderr_tail_lines = 40;
  return options;
}

TEST(SecureJobTest, LaunchRunsATlsJobWithItsOwnToken) {
  const std::string tmp = TmpFile("launch_tmp");
  std::filesystem::create_directories(tmp);
  ProcessGroupOptions options;
  options.deadline = absl::Seconds(120);
  ProcessGroup group(options);
  std::vector<nlohmann::json> finals;
  ChildSpec launch;
  launch.label = "launch";
  launch.argv = {Runfile("experiments/launch"),
                 "--strategy=sps",
                 "--workers=2",
                 "--steps=4",
                 "--batch_size=8",
                 absl::StrCat("--ps_server_bin=", Runfile("server/ps_server")),
                 absl::StrCat("--worker_bin=", Runfile("worker/worker")),
                 absl::StrCat("--tls_cert=", Pki().node_cert),
                 absl::StrCat("--tls_key=", Pki().node_key),
                 absl::StrCat("--tls_ca=", Pki().ca_cert),
                 "--"};
  launch.argv.insert(launch.argv.end(), kModel.begin(), kModel.end());
  launch.env = {absl::StrCat("TMPDIR=", tmp)};
  launch.on_stdout_line = [&finals](const std::string&, absl::string_view l) {
    auto j = nlohmann::json::parse(l, nullptr, false);
    if (j.is_object() && j.value("event", "") == "final") finals.push_back(j);
  };
  ASSERT_TRUE(group.Start(launch).ok());
  absl::Status s = group.Wait();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(finals.size(), 2u);
  // The generated token's folder is gone with the job.
  EXPECT_TRUE(std::filesystem::is_empty(tmp));
}

TEST(SecureJobTest, LaunchRefusesUnreadableSecurityFilesBeforeStarting) {
  ProcessGroup group(Quiet(absl::Seconds(60)));
  ChildSpec launch;
  launch.label = "launch";
  launch.argv = {Runfile("experiments/launch"), "--strategy=sps",
                 absl::StrCat("--ps_server_bin=", Runfile("server/ps_server")),
                 absl::StrCat("--worker_bin=", Runfile("worker/worker")),
                 absl::StrCat("--tls_cert=", Pki().node_cert),
                 absl::StrCat("--tls_key=", Pki().node_key),
                 "--tls_ca=/nonexistent/ca.pem"};
  ASSERT_TRUE(group.Start(launch).ok());
  absl::Status s = group.Wait();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("job security"));
  EXPECT_THAT(s.message(), HasSubstr("/nonexistent/ca.pem"));
}

// A server requiring the token, and one worker with `token_flags`.
absl::Status RunWorkerAgainstTokenServer(
    const std::vector<std::string>& token_flags) {
  ProcessGroup group(Quiet(absl::Seconds(60)));
  int port = 0;
  ChildSpec server;
  server.label = "ps_server";
  server.argv = {Runfile("server/ps_server"), "--host=127.0.0.1", "--port=0",
                 "--num_workers=1", "--max_job_s=30",
                 absl::StrCat("--auth_token_file=",
                              WriteTokenFile(TmpFile("server_token"),
                                             "the-right-token"))};
  server.on_stdout_line = [&port](const std::string&, absl::string_view l) {
    auto j = nlohmann::json::parse(l, nullptr, false);
    if (j.is_object() && j.value("event", "") == "listening") port = j["port"];
  };
  if (absl::StatusOr<int> id = group.Start(server); !id.ok()) return id.status();
  absl::StatusOr<bool> up =
      group.RunUntil([&port] { return port != 0; }, absl::Seconds(30));
  if (!up.ok() || !*up) return absl::InternalError("server did not listen");
  ChildSpec worker;
  worker.label = "worker";
  worker.argv = {Runfile("worker/worker"), "--strategy=sps", "--rank=0",
                 "--world_size=1", "--steps=2", "--connect_timeout_s=5",
                 "--rpc_timeout_s=5",
                 absl::StrCat("--servers=127.0.0.1:", port)};
  worker.argv.insert(worker.argv.end(), kModel.begin(), kModel.end());
  worker.argv.insert(worker.argv.end(), token_flags.begin(), token_flags.end());
  absl::StatusOr<int> id = group.Start(worker);
  if (!id.ok()) return id.status();
  absl::StatusOr<bool> done = group.RunUntil(
      [&] { return group.exited(*id); }, absl::Seconds(50));
  if (!done.ok()) return done.status();
  if (group.exit_code(*id) == 0) return absl::OkStatus();
  return group.Wait();  // the worker's failure, with its last stderr lines
}

TEST(SecureJobTest, WorkerWithAWrongTokenIsRefused) {
  absl::Status s = RunWorkerAgainstTokenServer(
      {absl::StrCat("--auth_token_file=",
                    WriteTokenFile(TmpFile("wrong_token"), "a-wrong-token"))});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("UNAUTHENTICATED"));
  EXPECT_THAT(s.message(), HasSubstr("wrong auth token"));
  EXPECT_THAT(std::string(s.message()),
              ::testing::Not(HasSubstr("the-right-token")));
}

TEST(SecureJobTest, WorkerWithoutATokenIsRefused) {
  absl::Status s = RunWorkerAgainstTokenServer({});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("missing auth token"));
}

TEST(SecureJobTest, WorkerWithTheTokenTrains) {
  EXPECT_TRUE(RunWorkerAgainstTokenServer(
                  {absl::StrCat("--auth_token_file=",
                                WriteTokenFile(TmpFile("right_token"),
                                               "the-right-token"))})
                  .ok());
}

struct BadFlags {
  std::string binary;
  std::vector<std::string> argv;
  std::string message;
};

class SecurityBadFlagsTest : public ::testing::TestWithParam<BadFlags> {};

TEST_P(SecurityBadFlagsTest, FailsFastNamingTheProblem) {
  ProcessGroup group(Quiet(absl::Seconds(30)));
  ChildSpec child;
  child.label = GetParam().binary;
  child.argv = {Runfile(GetParam().binary)};
  child.argv.insert(child.argv.end(), GetParam().argv.begin(),
                    GetParam().argv.end());
  ASSERT_TRUE(group.Start(child).ok());
  absl::Status s = group.Wait();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("exit"));
  EXPECT_THAT(s.message(), HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SecurityBadFlagsTest,
    ::testing::Values(
        BadFlags{"server/ps_server",
                 {"--auth_token_file=/nonexistent/token"},
                 "cannot read auth token file /nonexistent/token"},
        BadFlags{"server/ps_server",
                 {"--tls_ca=/nonexistent/ca.pem"},
                 "cannot read --tls_ca file /nonexistent/ca.pem"},
        BadFlags{"worker/worker",
                 {"--strategy=sps", "--servers=127.0.0.1:1",
                  "--auth_token_file=/dev/null"},
                 "is empty or holds only whitespace"},
        BadFlags{"worker/worker",
                 {"--strategy=sps", "--servers=127.0.0.1:1",
                  "--tls_cert=/dev/null"},
                 "--tls_cert file /dev/null is empty"}));

}  // namespace
}  // namespace ringside

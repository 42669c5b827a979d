// Integration: ps_server(s) (or none, for ring) and two worker processes
// started separately over loopback, the way a user would; their final
// parameters must equal those of one baseline worker process with twice the
// batch (the oracle). The secure variants run the same job with the job's
// token and TLS on every RPC (parameter servers, rendezvous store).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/relative_l2.h"
#include "experiments/job/process_group.h"
#include "tests/testing/test_pki.h"

namespace ringside {
namespace {

std::string Runfile(const std::string& path) {
  return absl::StrCat(std::getenv("TEST_SRCDIR"), "/ringside/", path);
}

std::string TmpFile(const std::string& name) {
  return absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
}

std::vector<float> ReadFloats(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), out.size() * 4);
  return out;
}

const std::vector<std::string> kCommon = {
    "--model=mlp",       "--mlp_widths=16,32,8",
    "--steps=12",        "--warmup_steps=2",
    "--lr=0.03",         "--train_examples=512",
    "--eval_examples=64"};

std::vector<std::string> WorkerArgv(std::vector<std::string> extra) {
  std::vector<std::string> argv = {Runfile("worker/worker")};
  argv.insert(argv.end(), kCommon.begin(), kCommon.end());
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

// --auth_token_file and --tls_* for every process of a secure job.
std::vector<std::string> SecurityFlags() {
  static const std::vector<std::string>* flags = [] {
    absl::StatusOr<TestPki> pki = MakeTestPki(TmpFile("pki"));
    if (!pki.ok()) {
      std::fprintf(stderr, "%s\n", pki.status().ToString().c_str());
      std::abort();
    }
    return new std::vector<std::string>{
        absl::StrCat("--auth_token_file=",
                     WriteTokenFile(TmpFile("token"), "job-token-42")),
        absl::StrCat("--tls_cert=", pki->node_cert),
        absl::StrCat("--tls_key=", pki->node_key),
        absl::StrCat("--tls_ca=", pki->ca_cert)};
  }();
  return *flags;
}

// (strategy, parameter servers, secure): sps with one, dps with two shards,
// ring with none (rank 0 serves the rendezvous store); secure: token + TLS.
class ProcessesTest
    : public ::testing::TestWithParam<std::tuple<std::string, int, bool>> {};

TEST_P(ProcessesTest, ServersAndTwoWorkersMatchBaselineWithDoubleBatch) {
  const auto [strategy, num_servers, secure] = GetParam();
  const std::vector<std::string> security =
      secure ? SecurityFlags() : std::vector<std::string>();
  ProcessGroupOptions options;
  options.deadline = absl::Seconds(120);
  ProcessGroup group(options);
  std::vector<int> ports(num_servers, 0);
  for (int s = 0; s < num_servers; ++s) {
    ChildSpec server;
    server.label = absl::StrCat("ps_server/", s);
    server.argv = {Runfile("server/ps_server"),
                   "--host=127.0.0.1",
                   "--port=0",
                   "--num_workers=2",
                   absl::StrCat("--shard=", s),
                   absl::StrCat("--num_shards=", num_servers)};
    server.argv.insert(server.argv.end(), security.begin(), security.end());
    server.on_stdout_line = [&ports, s](const std::string&,
                                        absl::string_view line) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_object() && j.value("event", "") == "listening") {
        ports[s] = j["port"].get<int>();
      }
    };
    ASSERT_TRUE(group.Start(server).ok());
  }
  absl::StatusOr<bool> up = group.RunUntil(
      [&] { return std::count(ports.begin(), ports.end(), 0) == 0; },
      absl::Seconds(30));
  ASSERT_TRUE(up.ok() && *up) << "servers did not report their ports";
  std::string servers_flag = "--servers=";
  for (int s = 0; s < num_servers; ++s) {
    absl::StrAppend(&servers_flag, s ? "," : "", "127.0.0.1:", ports[s]);
  }
  if (num_servers == 0) servers_flag = "--master_addr=127.0.0.1";
  // Rank 0 of a store-based strategy picks its port and announces it.
  int master_port = 0;

  std::vector<nlohmann::json> finals(2);
  for (int r = 0; r < 2; ++r) {
    ChildSpec worker;
    worker.label = absl::StrCat("worker/", r);
    // With a timeline on: recording must not change the result.
    worker.argv = WorkerArgv(
        {absl::StrCat("--strategy=", strategy), "--batch_size=8", servers_flag,
         absl::StrCat("--save_params=", TmpFile(absl::StrCat("w", r))),
         absl::StrCat("--timeline=", TmpFile(strategy), ".{rank}.json")});
    worker.argv.insert(worker.argv.end(), security.begin(), security.end());
    // Several chunks per server (a flag of the PS strategies only).
    if (num_servers > 0) worker.argv.push_back("--chunk_kb=1");
    // Rank and world size from torchrun's environment, as a launcher would.
    worker.env = {absl::StrCat("RANK=", r), "WORLD_SIZE=2",
                  absl::StrCat("MASTER_PORT=", master_port)};
    worker.on_stdout_line = [&finals, &master_port, r](const std::string&,
                                                       absl::string_view line) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (!j.is_object()) return;
      if (j.value("event", "") == "final") finals[r] = j;
      if (j.value("event", "") == "rendezvous") master_port = j["master_port"];
    };
    ASSERT_TRUE(group.Start(worker).ok());
    if (num_servers == 0 && r == 0) {
      absl::StatusOr<bool> announced =
          group.RunUntil([&] { return master_port != 0; }, absl::Seconds(30));
      ASSERT_TRUE(announced.ok() && *announced) << "no rendezvous line";
    }
  }
  // Workers finish, then the server exits 0 by itself.
  ASSERT_TRUE(group.Wait().ok());

  ProcessGroup baseline_group(options);
  ChildSpec baseline;
  baseline.label = "baseline";
  baseline.argv = WorkerArgv({"--strategy=baseline", "--batch_size=16",
                              absl::StrCat("--save_params=", TmpFile("b"))});
  ASSERT_TRUE(baseline_group.Start(baseline).ok());
  ASSERT_TRUE(baseline_group.Wait().ok());

  const std::vector<float> reference = ReadFloats(TmpFile("b"));
  ASSERT_FALSE(reference.empty());
  for (int r = 0; r < 2; ++r) {
    const std::vector<float> params = ReadFloats(TmpFile(absl::StrCat("w", r)));
    ASSERT_EQ(params.size(), reference.size());
    EXPECT_LE(RelativeL2(params, reference), 1e-5) << "rank " << r;
    ASSERT_TRUE(finals[r].is_object()) << "rank " << r << " printed no final";
    EXPECT_EQ(finals[r]["rank_source"], "torchrun");
    EXPECT_EQ(finals[r]["strategy"], strategy);
    EXPECT_GT(finals[r]["bytes_sent"].get<int64_t>(), 0);
    EXPECT_GT(finals[r]["utilization"].get<double>(), 0.0);
    std::ifstream timeline(TmpFile(absl::StrCat(strategy, ".", r, ".json")));
    EXPECT_TRUE(nlohmann::json::accept(timeline)) << "rank " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Strategies, ProcessesTest,
    ::testing::Values(std::make_tuple("sps", 1, false),
                      std::make_tuple("dps", 2, false),
                      std::make_tuple("ring", 0, false),
                      std::make_tuple("sps", 1, true),
                      std::make_tuple("ring", 0, true)),
    [](const ::testing::TestParamInfo<std::tuple<std::string, int, bool>>& i) {
      return absl::StrCat(std::get<0>(i.param),
                          std::get<2>(i.param) ? "_token_tls" : "");
    });

// Bad flags fail fast with a clear message and a non-zero exit.
struct BadFlags {
  std::vector<std::string> argv;
  std::string message;
};

class WorkerBadFlagsTest : public ::testing::TestWithParam<BadFlags> {};

TEST_P(WorkerBadFlagsTest, FailsFastNamingTheProblem) {
  ProcessGroupOptions options;
  options.deadline = absl::Seconds(30);
  options.relay_stderr = false;
  ProcessGroup group(options);
  ChildSpec child;
  child.label = "worker";
  child.argv = WorkerArgv(GetParam().argv);
  ASSERT_TRUE(group.Start(child).ok());
  absl::Status s = group.Wait();
  ASSERT_FALSE(s.ok()) << "worker accepted bad flags";
  EXPECT_NE(s.message().find(GetParam().message), std::string::npos) << s;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, WorkerBadFlagsTest,
    ::testing::Values(
        BadFlags{{"--world_size=0", "--rank=0"}, "world size must be >= 1"},
        BadFlags{{"--world_size=2", "--rank=2"}, "rank 2 is outside [0, 2)"},
        BadFlags{{"--strategy=allreduce9"}, "unknown strategy 'allreduce9'"},
        BadFlags{{"--model=resnet9000"}, "unknown model 'resnet9000'"},
        BadFlags{{"--strategy=sps", "--servers=localhost"},
                 "bad server address 'localhost'"},
        BadFlags{{"--strategy=sps", "--servers=127.0.0.1:1",
                  "--connect_timeout_s=1"},
                 "unreachable"},
        // A strategy-specific flag the strategy would ignore.
        BadFlags{{"--strategy=ring", "--local_size=2"},
                 "--local_size=2 is not read by strategy 'ring' (only by "
                 "byteps, hierarchical)"},
        BadFlags{{"--strategy=sps", "--servers=127.0.0.1:1", "--staleness=2"},
                 "--staleness=2 is not read by strategy 'sps' (only by "
                 "async_ps)"}));

TEST(PsServerBadFlagsTest, ZeroWorkersIsRefused) {
  ProcessGroupOptions options;
  options.relay_stderr = false;
  ProcessGroup group(options);
  ChildSpec child;
  child.label = "ps_server";
  child.argv = {Runfile("server/ps_server"), "--num_workers=0"};
  ASSERT_TRUE(group.Start(child).ok());
  absl::Status s = group.Wait();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("num_workers must be >= 1"), std::string::npos)
      << s;
}

}  // namespace
}  // namespace ringside

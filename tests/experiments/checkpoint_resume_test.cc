// Checkpoint and resume with real processes: a job interrupted after a
// checkpoint and restarted with --resume ends with exactly (bit for bit) the
// parameters of an uninterrupted run, for every strategy family; and a
// parameter server killed with SIGKILL mid-run makes the workers fail within
// their deadline, after which the restarted job resumes from the shard's
// last checkpoint and again ends exactly where an uninterrupted run does.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "experiments/job/process_group.h"

namespace ringside {
namespace {

std::string Runfile(const std::string& path) {
  return absl::StrCat(std::getenv("TEST_SRCDIR"), "/ringside/", path);
}

std::string TmpPath(const std::string& name) {
  return absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

const std::vector<std::string> kModel = {
    "--mlp_widths=16,32,8", "--warmup_steps=0", "--train_examples=512",
    "--eval_examples=64",   "--optimizer=adam", "--lr=0.01"};

// Runs `launch` within `deadline`; returns its exit code, collecting the
// workers' finals and, when it fails, the group's error (which names the
// child and quotes its last stderr lines).
int Launch(const std::vector<std::string>& flags,
           std::vector<nlohmann::json>* finals = nullptr,
           std::string* error = nullptr,
           absl::Duration deadline = absl::Seconds(120)) {
  ProcessGroupOptions options;
  options.deadline = deadline;
  options.relay_stderr = false;
  ProcessGroup group(options);
  ChildSpec child;
  child.label = "launch";
  child.argv = {Runfile("experiments/launch"),
                "--worker_bin=" + Runfile("worker/worker"),
                "--ps_server_bin=" + Runfile("server/ps_server")};
  child.argv.insert(child.argv.end(), flags.begin(), flags.end());
  child.on_stdout_line = [finals](const std::string&, absl::string_view line) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (finals && j.is_object() && j.value("event", "") == "final") {
      finals->push_back(j);
    }
  };
  if (!group.Start(child).ok()) return -1;
  const absl::Status waited = group.Wait();
  if (error != nullptr) *error = std::string(waited.message());
  return group.exit_code(0);
}

class ResumeTest
    : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(ResumeTest, InterruptedAndResumedEqualsUninterrupted) {
  const auto [strategy, servers] = GetParam();
  const std::string dir = TmpPath(absl::StrCat("ckpt_", strategy));
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  auto flags = [&](int steps, std::vector<std::string> extra) {
    std::vector<std::string> f = {
        absl::StrCat("--strategy=", strategy), "--workers=2",
        absl::StrCat("--servers=", servers), absl::StrCat("--steps=", steps)};
    f.insert(f.end(), extra.begin(), extra.end());
    f.push_back("--");
    f.insert(f.end(), kModel.begin(), kModel.end());
    // Several chunks per server (a worker flag of the PS strategies only).
    if (servers > 0) f.push_back("--chunk_kb=1");
    // Two hosts of one rank: the checkpoint travels across the hosts.
    if (strategy == "hierarchical" || strategy == "byteps") {
      f.push_back("--local_size=1");
    }
    // Plain steps first, the checkpoint (after step 6) past them: the step
    // counts travel with the error feedback.
    if (strategy == "ring_topk" || strategy == "ring_sign" ||
        strategy == "ring_onebit_adam") {
      f.push_back("--compression_start_step=4");
    }
    return f;
  };
  // Each rank saves its own parameters ({rank}), and both are compared.
  auto with_params = [&](std::vector<std::string> f, const std::string& p) {
    f.push_back("--save_params=" + p + ".rank{rank}");
    return f;
  };
  const std::string full = TmpPath(strategy + "_full.bin");
  const std::string resumed = TmpPath(strategy + "_resumed.bin");
  ASSERT_EQ(Launch(with_params(flags(12, {}), full)), 0);
  // Stops after step 8; the last checkpoint is after step 6.
  ASSERT_EQ(
      Launch(flags(8, {"--checkpoint_dir=" + dir, "--checkpoint_every=3"})), 0);
  std::vector<nlohmann::json> finals;
  ASSERT_EQ(
      Launch(with_params(flags(12, {"--checkpoint_dir=" + dir, "--resume"}),
                         resumed),
             &finals),
      0);
  ASSERT_EQ(finals.size(), 2u);
  for (const auto& f : finals) EXPECT_EQ(f["start_step"], 6) << f.dump();
  for (int rank = 0; rank < 2; ++rank) {
    const std::string a = ReadAll(absl::StrCat(full, ".rank", rank));
    const std::string b = ReadAll(absl::StrCat(resumed, ".rank", rank));
    ASSERT_FALSE(a.empty()) << "rank " << rank;
    EXPECT_TRUE(a == b) << "rank " << rank
                        << ": resumed parameters differ from the "
                           "uninterrupted run";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Strategies, ResumeTest,
    ::testing::Values(std::make_tuple("sps", 1), std::make_tuple("dps", 2),
                      std::make_tuple("byteps", 2),
                      std::make_tuple("ring", 0),
                      std::make_tuple("ring_fp16", 0),
                      std::make_tuple("ring_bf16", 0),
                      std::make_tuple("ring_powersgd", 0),
                      std::make_tuple("ring_topk", 0),
                      std::make_tuple("ring_sign", 0),
                      std::make_tuple("ring_onebit_adam", 0),
                      std::make_tuple("local_sgd", 0),
                      std::make_tuple("diloco", 0),
                      std::make_tuple("fusion", 0),
                      std::make_tuple("hierarchical", 0),
                      std::make_tuple("zero1", 0), std::make_tuple("zero2", 0),
                      std::make_tuple("zero3", 0)),
    [](const auto& info) { return std::get<0>(info.param); });

TEST(ResumeTest, ResumingWithoutACheckpointIsRefused) {
  const std::string dir = TmpPath("empty_ckpt");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  for (auto [strategy, servers] :
       {std::make_tuple("sps", 1), std::make_tuple("ring", 0)}) {
    std::string err;
    EXPECT_NE(Launch({absl::StrCat("--strategy=", strategy), "--workers=2",
                      absl::StrCat("--servers=", servers), "--steps=8",
                      "--checkpoint_dir=" + dir, "--resume"},
                     nullptr, &err, absl::Seconds(60)),
              0)
        << strategy;
    EXPECT_NE(err.find("no checkpoint at"), std::string::npos)
        << strategy << ": " << err;
  }
}

// A rank's own state (a compression hook's error feedback; local_sgd's and
// diloco's parameters and optimizer state between averages) resumes only
// on the number of workers that wrote it; another number is refused
// naming the missing file.
TEST(ResumeTest, RankStateResumesOnlyWithTheWorkersThatWroteIt) {
  for (const std::string strategy : {"ring_topk", "diloco"}) {
    const std::string dir = TmpPath("ckpt_workers_" + strategy);
    ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
    auto flags = [&](int workers, std::vector<std::string> extra) {
      std::vector<std::string> f = {"--strategy=" + strategy,
                                    absl::StrCat("--workers=", workers),
                                    "--steps=6", "--checkpoint_dir=" + dir};
      f.insert(f.end(), extra.begin(), extra.end());
      f.push_back("--");
      f.insert(f.end(), kModel.begin(), kModel.end());
      return f;
    };
    ASSERT_EQ(Launch(flags(2, {"--checkpoint_every=3"})), 0) << strategy;
    std::string err;
    EXPECT_NE(
        Launch(flags(3, {"--resume"}), nullptr, &err, absl::Seconds(60)), 0)
        << strategy;
    EXPECT_NE(err.find("rank-0-of-3.ckpt"), std::string::npos)
        << strategy << ": " << err;
    EXPECT_NE(err.find("resume with the workers"), std::string::npos)
        << strategy << ": " << err;
  }
}

// The ZeRO stages' flags for `workers` ranks, `steps` steps, and a global
// batch of 24 whatever the number of ranks (the oracle's condition).
// `save`: the worker's --save_params, when not empty.
std::vector<std::string> ZeroFlags(const std::string& strategy, int workers,
                                   int steps, const std::string& layout,
                                   std::vector<std::string> extra,
                                   const std::string& save = "") {
  std::vector<std::string> f = {absl::StrCat("--strategy=", strategy),
                                absl::StrCat("--workers=", workers),
                                absl::StrCat("--steps=", steps),
                                absl::StrCat("--batch_size=", 24 / workers)};
  f.insert(f.end(), extra.begin(), extra.end());
  f.push_back("--");
  f.insert(f.end(), kModel.begin(), kModel.end());
  f.push_back("--zero_layout=" + layout);
  if (!save.empty()) f.push_back("--save_params=" + save + ".rank{rank}");
  return f;
}

std::vector<float> ReadFloats(const std::string& path) {
  const std::string bytes = ReadAll(path);
  std::vector<float> v(bytes.size() / 4);
  if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * 4);
  return v;
}

// A checkpoint written with the contiguous layout resumes with the
// per-unit one (every rank's pieces resharded from the files): at two
// ranks both layouts average the same two values, so the resumed run ends
// bit for bit where an uninterrupted per-unit run does.
TEST(ResumeTest, ShardedCheckpointsReshardOntoAnotherLayoutExactly) {
  for (const std::string strategy : {"zero2", "zero3"}) {
    const std::string dir = TmpPath("layout_ckpt_" + strategy);
    ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
    const std::string full = TmpPath(strategy + "_per_unit_full.bin");
    const std::string resumed = TmpPath(strategy + "_per_unit_resumed.bin");
    ASSERT_EQ(Launch(ZeroFlags(strategy, 2, 12, "per_unit",
                               {}, full)),
              0);
    ASSERT_EQ(Launch(ZeroFlags(strategy, 2, 8, "contiguous",
                               {"--checkpoint_dir=" + dir,
                                "--checkpoint_every=3"})),
              0);
    std::vector<nlohmann::json> finals;
    ASSERT_EQ(Launch(ZeroFlags(strategy, 2, 12, "per_unit",
                               {"--checkpoint_dir=" + dir, "--resume"},
                               resumed),
                     &finals),
              0);
    ASSERT_EQ(finals.size(), 2u);
    for (const auto& f : finals) EXPECT_EQ(f["start_step"], 6) << f.dump();
    for (int rank = 0; rank < 2; ++rank) {
      const std::string a = ReadAll(absl::StrCat(full, ".rank", rank));
      ASSERT_FALSE(a.empty()) << strategy << " rank " << rank;
      EXPECT_TRUE(a == ReadAll(absl::StrCat(resumed, ".rank", rank)))
          << strategy << " rank " << rank
          << ": resharded and resumed parameters differ from the "
             "uninterrupted run";
    }
  }
}

// A checkpoint of 2 ranks resumes on 3 (parameters and Adam's moments
// resharded): it starts at the checkpoint's step, and ends where an
// uninterrupted 3-rank run with the same global batch does, within the
// oracle's float tolerance (the first steps averaged over 2 ranks, not 3,
// round differently). The newest set wins: the 3-rank files it writes are
// what the next resume loads.
TEST(ResumeTest, ShardedCheckpointsResumeOnAnotherNumberOfWorkers) {
  const std::string dir = TmpPath("zero_ckpt");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  const std::string full = TmpPath("zero3_three_full.bin");
  const std::string resumed = TmpPath("zero3_three_resumed.bin");
  ASSERT_EQ(Launch(ZeroFlags("zero3", 3, 12, "per_unit",
                             {}, full)),
            0);
  ASSERT_EQ(Launch(ZeroFlags("zero3", 2, 8, "per_unit",
                             {"--checkpoint_dir=" + dir,
                              "--checkpoint_every=3"})),
            0);
  std::vector<nlohmann::json> finals;
  ASSERT_EQ(Launch(ZeroFlags("zero3", 3, 12, "per_unit",
                             {"--checkpoint_dir=" + dir, "--resume",
                              "--checkpoint_every=10"},
                             resumed),
                   &finals),
            0);
  ASSERT_EQ(finals.size(), 3u);
  for (const auto& f : finals) EXPECT_EQ(f["start_step"], 6) << f.dump();
  const std::vector<float> a = ReadFloats(full + ".rank0");
  const std::vector<float> b = ReadFloats(resumed + ".rank0");
  ASSERT_EQ(a.size(), b.size());
  ASSERT_FALSE(a.empty());
  float worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, std::abs(a[i] - b[i]) / (1e-3f + std::abs(a[i])));
  }
  EXPECT_LT(worst, 1e-4f) << "resumed on 3 ranks, off by " << worst;
  EXPECT_TRUE(ReadAll(resumed + ".rank0") == ReadAll(resumed + ".rank2"));
  // The 3-rank set of step 10 is newer than the 2-rank set of step 6.
  finals.clear();
  ASSERT_EQ(Launch(ZeroFlags("zero3", 2, 12, "per_unit",
                             {"--checkpoint_dir=" + dir, "--resume"}),
                   &finals),
            0);
  ASSERT_EQ(finals.size(), 2u);
  for (const auto& f : finals) EXPECT_EQ(f["start_step"], 10) << f.dump();
}

// ps_server started through sh so that the test knows its pid.
ChildSpec Server(const std::string& dir, const std::string& pid_file,
                 bool resume, int* port) {
  ChildSpec server;
  server.label = "ps_server";
  server.argv = {"/bin/sh", "-c",
                 absl::StrCat("echo $$ > ", pid_file, "; exec ",
                              Runfile("server/ps_server"),
                              " --host=127.0.0.1 --port=0 --num_workers=2"
                              " --checkpoint_every=5 --checkpoint_dir=",
                              dir, resume ? " --resume" : "")};
  server.on_stdout_line = [port](const std::string&, absl::string_view line) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.value("event", "") == "listening") {
      *port = j["port"].get<int>();
    }
  };
  return server;
}

ChildSpec Worker(int rank, int port, const std::string& params) {
  ChildSpec worker;
  worker.label = absl::StrCat("worker/", rank);
  worker.argv = {
      Runfile("worker/worker"), "--strategy=sps", absl::StrCat("--rank=", rank),
      "--world_size=2", absl::StrCat("--servers=127.0.0.1:", port),
      "--steps=300", "--batch_size=8", "--rpc_timeout_s=10",
      // A lost server is named within this (kill_test's bound).
      "--failure_timeout_s=3", "--save_params=" + params + ".rank{rank}"};
  worker.argv.insert(worker.argv.end(), kModel.begin(), kModel.end());
  worker.argv.push_back("--chunk_kb=1");
  return worker;
}

TEST(ServerKillTest, KilledServerFailsTheJobWhichThenResumesExactly) {
  const std::string dir = TmpPath("kill_ckpt");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  const std::string pid_file = TmpPath("server.pid");
  const std::string ckpt = dir + "/shard-0-of-1.ckpt";
  ProcessGroupOptions options;
  options.deadline = absl::Seconds(120);
  options.relay_stderr = false;

  // Uninterrupted reference.
  {
    const std::string ref_dir = TmpPath("ref_ckpt");
    ASSERT_EQ(::mkdir(ref_dir.c_str(), 0755), 0);
    ProcessGroup group(options);
    int port = 0;
    ASSERT_TRUE(
        group.Start(Server(ref_dir, TmpPath("ref.pid"), false, &port)).ok());
    ASSERT_TRUE(*group.RunUntil([&] { return port != 0; }, absl::Seconds(30)));
    for (int r = 0; r < 2; ++r) {
      ASSERT_TRUE(group.Start(Worker(r, port, TmpPath("ref.bin"))).ok());
    }
    ASSERT_TRUE(group.Wait().ok());
  }

  // Kill the server once its first checkpoint exists. The group must not
  // stop the workers itself when the server dies: what ends them has to be
  // their own failure detection.
  {
    ProcessGroupOptions watch = options;
    watch.stop_on_failure = false;
    ProcessGroup group(watch);
    int port = 0;
    ASSERT_TRUE(group.Start(Server(dir, pid_file, false, &port)).ok());
    ASSERT_TRUE(*group.RunUntil([&] { return port != 0; }, absl::Seconds(30)));
    for (int r = 0; r < 2; ++r) {
      ASSERT_TRUE(group.Start(Worker(r, port, TmpPath("w.bin"))).ok());
    }
    absl::StatusOr<bool> saved = group.RunUntil(
        [&] { return std::ifstream(ckpt).good(); }, absl::Seconds(60));
    ASSERT_TRUE(saved.ok() && *saved) << "no checkpoint appeared";
    const int pid = std::atoi(ReadAll(pid_file).c_str());
    ASSERT_GT(pid, 0);
    const absl::Time killed = absl::Now();
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    (void)group.RunUntil([&] { return group.exited(1) && group.exited(2); },
                         absl::Seconds(30));
    const double exit_s = absl::ToDoubleSeconds(absl::Now() - killed);
    for (int id = 1; id <= 2; ++id) {
      EXPECT_TRUE(group.exited(id)) << group.label(id) << " still running";
      EXPECT_NE(group.exit_code(id), 0) << group.label(id);
    }
    EXPECT_LT(exit_s, 15.0) << "workers took too long to notice";
  }

  // Restart from the checkpoint: same end state as the reference.
  {
    ProcessGroup group(options);
    int port = 0;
    ASSERT_TRUE(group.Start(Server(dir, pid_file, true, &port)).ok());
    ASSERT_TRUE(*group.RunUntil([&] { return port != 0; }, absl::Seconds(30)));
    for (int r = 0; r < 2; ++r) {
      ASSERT_TRUE(group.Start(Worker(r, port, TmpPath("resumed.bin"))).ok());
    }
    ASSERT_TRUE(group.Wait().ok());
  }
  for (int rank = 0; rank < 2; ++rank) {
    const std::string ref =
        ReadAll(TmpPath(absl::StrCat("ref.bin.rank", rank)));
    ASSERT_FALSE(ref.empty()) << "rank " << rank;
    EXPECT_TRUE(ref == ReadAll(TmpPath(absl::StrCat("resumed.bin.rank", rank))))
        << "rank " << rank;
  }
}

}  // namespace
}  // namespace ringside

// Kill tests of liveness: real ps_server and worker processes;
// one is SIGKILLed mid-run and every other one must exit non-zero within
// --failure_timeout_s (+ slack), saying which rank or server was lost and
// at which step. Timeouts are 3 s so that each case takes ~10 s.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "experiments/job/process_group.h"

namespace ringside {
namespace {

constexpr int kFailureTimeoutS = 3;
// Detection takes the timeout plus up to a heartbeat period (0.5 s) on each
// side; a server then keeps answering for a third of the timeout.
constexpr absl::Duration kSlack = absl::Seconds(5);

std::string Runfile(const std::string& path) {
  return absl::StrCat(std::getenv("TEST_SRCDIR"), "/ringside/", path);
}

std::vector<std::string> WorkerArgv(const std::string& strategy, int rank,
                                    int world_size) {
  std::vector<std::string> argv = {
      Runfile("worker/worker"),
      absl::StrCat("--strategy=", strategy),
      absl::StrCat("--rank=", rank),
      absl::StrCat("--world_size=", world_size),
      "--model=mlp",
      "--mlp_widths=16,32,8",
      "--train_examples=512",
      "--eval_examples=64",
      "--batch_size=8",
      "--steps=100000000",
      "--warmup_steps=0",
      absl::StrCat("--failure_timeout_s=", kFailureTimeoutS)};
  // Several chunks per server (a flag of the PS strategies only).
  if (strategy == "sps" || strategy == "dps") argv.push_back("--chunk_kb=1");
  return argv;
}

// One job's processes, each kept running when another fails.
class Job {
 public:
  Job() : group_(Options()) {}

  static ProcessGroupOptions Options() {
    ProcessGroupOptions options;
    options.deadline = absl::Seconds(90);
    options.stop_on_failure = false;
    options.relay_stderr = false;
    options.stderr_tail_lines = 400;
    return options;
  }

  // Starts K servers for N workers and returns "--servers=..." once all
  // listen.
  std::string StartServers(int k, int n) {
    ports_.assign(k, 0);
    for (int s = 0; s < k; ++s) {
      ChildSpec spec;
      spec.label = absl::StrCat("server/", s);
      spec.argv = {Runfile("server/ps_server"),
                   "--host=127.0.0.1",
                   "--port=0",
                   absl::StrCat("--num_workers=", n),
                   absl::StrCat("--shard=", s),
                   absl::StrCat("--num_shards=", k),
                   absl::StrCat("--failure_timeout_s=", kFailureTimeoutS)};
      spec.on_stdout_line = [this, s](const std::string&,
                                      absl::string_view line) {
        auto j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_object() && j.value("event", "") == "listening") {
          ports_[s] = j["port"].get<int>();
        }
      };
      absl::StatusOr<int> id = group_.Start(spec);
      EXPECT_TRUE(id.ok()) << id.status();
      if (id.ok()) servers_.push_back(*id);
    }
    absl::StatusOr<bool> up = group_.RunUntil(
        [&] { return std::count(ports_.begin(), ports_.end(), 0) == 0; },
        absl::Seconds(30));
    EXPECT_TRUE(up.ok() && *up) << "servers did not report their ports";
    std::vector<std::string> addresses;
    for (int port : ports_)
      addresses.push_back(absl::StrCat("127.0.0.1:", port));
    return absl::StrCat("--servers=", absl::StrJoin(addresses, ","));
  }

  // Starts a worker; `extra` flags are appended. Rank 0 of a store strategy
  // announces its store port, which the later ranks get.
  void StartWorker(std::vector<std::string> argv) {
    const int rank = static_cast<int>(workers_.size());
    steps_.push_back(0);
    ChildSpec spec;
    spec.label = absl::StrCat("worker/", rank);
    spec.argv = std::move(argv);
    spec.on_stdout_line = [this, rank](const std::string&,
                                       absl::string_view line) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (!j.is_object()) return;
      if (j.value("event", "") == "step") ++steps_[rank];
      if (j.value("event", "") == "rendezvous") master_port_ = j["master_port"];
    };
    absl::StatusOr<int> id = group_.Start(spec);
    ASSERT_TRUE(id.ok()) << id.status();
    workers_.push_back(*id);
  }

  int WaitForMasterPort() {
    absl::StatusOr<bool> announced =
        group_.RunUntil([&] { return master_port_ != 0; }, absl::Seconds(30));
    EXPECT_TRUE(announced.ok() && *announced) << "no rendezvous line";
    return master_port_;
  }

  // Runs until every worker has done `steps` steps.
  void RunSteps(int steps) {
    absl::StatusOr<bool> running = group_.RunUntil(
        [&] {
          return std::all_of(steps_.begin(), steps_.end(),
                             [steps](int n) { return n >= steps; });
        },
        absl::Seconds(60));
    ASSERT_TRUE(running.ok() && *running)
        << "the job did not get going: " << Report();
  }

  // SIGKILLs process `id`, then runs until every other process has exited
  // or `limit` passed; returns each one's seconds from the kill to its exit
  // (-1: still running).
  std::vector<double> KillAndWait(int id, absl::Duration limit) {
    const absl::Time killed = absl::Now();
    group_.Kill(id, SIGKILL);
    std::vector<double> exit_s(group_.size(), -1.0);
    // Whether all exited in time shows in exit_s (-1: still running).
    absl::StatusOr<bool> all_exited = group_.RunUntil(
        [&] {
          bool all = true;
          for (int i = 0; i < group_.size(); ++i) {
            if (group_.exited(i) && exit_s[i] < 0) {
              exit_s[i] = absl::ToDoubleSeconds(absl::Now() - killed);
            }
            all = all && group_.exited(i);
          }
          return all;
        },
        limit);
    all_exited.IgnoreError();
    return exit_s;
  }

  std::string Stderr(int id) const {
    return absl::StrJoin(group_.stderr_tail(id), "\n");
  }
  std::string Report() const {
    std::string out;
    for (int i = 0; i < group_.size(); ++i) {
      absl::StrAppend(&out, "\n--- ", group_.label(i), " (exit ",
                      group_.exit_code(i), ")\n", Stderr(i));
    }
    return out;
  }

  ProcessGroup& group() { return group_; }
  const std::vector<int>& servers() const { return servers_; }
  const std::vector<int>& workers() const { return workers_; }
  int port(int shard) const { return ports_[shard]; }

 private:
  ProcessGroup group_;
  std::vector<int> ports_;
  std::vector<int> servers_, workers_;
  std::vector<int> steps_;
  int master_port_ = 0;
};

// Every process but `killed` exited non-zero within `limit` seconds.
void ExpectOthersFailedWithin(Job& job, const std::vector<double>& exit_s,
                              int killed, double limit) {
  for (int i = 0; i < job.group().size(); ++i) {
    if (i == killed) continue;
    EXPECT_TRUE(job.group().exited(i))
        << job.group().label(i) << " still running" << job.Report();
    EXPECT_NE(job.group().exit_code(i), 0)
        << job.group().label(i) << " exited 0" << job.Report();
    EXPECT_GE(exit_s[i], 0.0);
    EXPECT_LE(exit_s[i], limit) << job.group().label(i) << job.Report();
  }
}

TEST(KillTest, SpsWorkerKilledFailsEveryoneNamingTheRankAndStep) {
  Job job;
  const std::string servers = job.StartServers(1, 3);
  for (int r = 0; r < 3; ++r) {
    std::vector<std::string> argv = WorkerArgv("sps", r, 3);
    argv.push_back(servers);
    job.StartWorker(argv);
  }
  job.RunSteps(20);
  const int victim = job.workers()[1];
  const std::vector<double> exit_s =
      job.KillAndWait(victim, absl::Seconds(kFailureTimeoutS) + kSlack * 2);
  ExpectOthersFailedWithin(job, exit_s, victim,
                           kFailureTimeoutS + absl::ToDoubleSeconds(kSlack));
  // The server names the rank and its last step; so does every worker.
  const std::string server = job.Stderr(job.servers()[0]);
  EXPECT_TRUE(absl::StrContains(server, "worker rank 1 lost: no heartbeat for"))
      << server;
  EXPECT_TRUE(absl::StrContains(server, "(last seen at step ")) << server;
  for (int r : {0, 2}) {
    const std::string log = job.Stderr(job.workers()[r]);
    EXPECT_TRUE(absl::StrContains(log, "worker rank 1 lost")) << log;
    EXPECT_TRUE(absl::StrContains(log, "(last seen at step ")) << log;
    EXPECT_TRUE(absl::StrContains(log, "this worker at step ")) << log;
  }
}

TEST(KillTest, RingWorkerKilledFailsEveryoneNamingTheRankAndStep) {
  Job job;
  std::vector<std::string> argv = WorkerArgv("ring", 0, 3);
  argv.push_back("--master_addr=127.0.0.1");
  argv.push_back("--master_port=0");
  job.StartWorker(argv);
  const int master_port = job.WaitForMasterPort();
  for (int r = 1; r < 3; ++r) {
    argv = WorkerArgv("ring", r, 3);
    argv.push_back("--master_addr=127.0.0.1");
    argv.push_back(absl::StrCat("--master_port=", master_port));
    job.StartWorker(argv);
  }
  job.RunSteps(10);
  const int victim = job.workers()[1];
  const std::vector<double> exit_s =
      job.KillAndWait(victim, absl::Seconds(kFailureTimeoutS) + kSlack * 2);
  ExpectOthersFailedWithin(job, exit_s, victim,
                           kFailureTimeoutS + absl::ToDoubleSeconds(kSlack));
  for (int r : {0, 2}) {
    const std::string log = job.Stderr(job.workers()[r]);
    EXPECT_TRUE(absl::StrContains(log, "rank 1 lost: no heartbeat for")) << log;
    EXPECT_TRUE(absl::StrContains(log, "this rank at step ")) << log;
  }
}

TEST(KillTest, RingStoreKilledFailsEveryoneNamingRankZerosStore) {
  Job job;
  std::vector<std::string> argv = WorkerArgv("ring", 0, 3);
  argv.push_back("--master_addr=127.0.0.1");
  argv.push_back("--master_port=0");
  job.StartWorker(argv);
  const int master_port = job.WaitForMasterPort();
  for (int r = 1; r < 3; ++r) {
    argv = WorkerArgv("ring", r, 3);
    argv.push_back("--master_addr=127.0.0.1");
    argv.push_back(absl::StrCat("--master_port=", master_port));
    job.StartWorker(argv);
  }
  job.RunSteps(10);
  const int victim = job.workers()[0];  // serves the job's store
  const std::vector<double> exit_s =
      job.KillAndWait(victim, absl::Seconds(kFailureTimeoutS) + kSlack * 2);
  ExpectOthersFailedWithin(job, exit_s, victim,
                           kFailureTimeoutS + absl::ToDoubleSeconds(kSlack));
  for (int r : {1, 2}) {
    const std::string log = job.Stderr(job.workers()[r]);
    EXPECT_TRUE(absl::StrContains(
        log, absl::StrCat("rank 0's store (127.0.0.1:", master_port,
                          ") lost: no heartbeat for")))
        << log;
    EXPECT_TRUE(absl::StrContains(log, "this rank at step ")) << log;
  }
}

// `transport`: the workers' --ps_transport (the bulk path notices the dead
// server as the gRPC one does).
void KillDpsServer(const std::string& transport) {
  Job job;
  const std::string servers = job.StartServers(2, 2);
  for (int r = 0; r < 2; ++r) {
    std::vector<std::string> argv = WorkerArgv("dps", r, 2);
    argv.push_back(servers);
    argv.push_back("--ps_transport=" + transport);
    job.StartWorker(argv);
  }
  job.RunSteps(20);
  const int victim = job.servers()[1];
  // The surviving server exits only after its workers' silence passes the
  // timeout too: give it two timeouts.
  const std::vector<double> exit_s =
      job.KillAndWait(victim, absl::Seconds(2 * kFailureTimeoutS) + kSlack * 2);
  ExpectOthersFailedWithin(
      job, exit_s, victim,
      2 * kFailureTimeoutS + absl::ToDoubleSeconds(kSlack));
  for (int r = 0; r < 2; ++r) {
    const int id = job.workers()[r];
    EXPECT_LE(exit_s[id], kFailureTimeoutS + absl::ToDoubleSeconds(kSlack));
    const std::string log = job.Stderr(id);
    EXPECT_TRUE(absl::StrContains(
        log, absl::StrCat("parameter server shard 1 (127.0.0.1:", job.port(1),
                          ") lost: no heartbeat for")))
        << transport << ": " << log;
    EXPECT_TRUE(absl::StrContains(log, "this worker at step "))
        << transport << ": " << log;
  }
}

TEST(KillTest, DpsServerKilledFailsTheWorkersNamingTheServerAndStep) {
  KillDpsServer("grpc");
}

TEST(KillTest, DpsServerKilledOnTheBulkPathFailsTheWorkersAlike) {
  KillDpsServer("tcp");
}

}  // namespace
}  // namespace ringside

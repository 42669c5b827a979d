#include "experiments/job/local_job.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <system_error>
#include <utility>

#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/auth.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "common/timeline.h"
#include "experiments/job/process_group.h"
#include "tools/cpp/runfiles/runfiles.h"

namespace ringside {
namespace {

using nlohmann::json;

// Parses a line as a JSON object; null when it is not one.
json ParseObject(absl::string_view line) {
  json j = json::parse(line.begin(), line.end(), nullptr,
                       /*allow_exceptions=*/false);
  return j.is_object() ? j : json();
}

// The string at `key`, or "" when absent or not a string.
std::string StringField(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return "";
  return j[key].get<std::string>();
}

void ToStderr(const std::string& label, absl::string_view line) {
  const std::string text = absl::StrCat("[", label, "] ", line, "\n");
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

absl::Status Validate(const LocalJobOptions& o) {
  if (o.worker_bin.empty()) return absl::InvalidArgumentError("no worker_bin");
  if (o.strategy.empty()) return absl::InvalidArgumentError("no strategy");
  if (o.num_workers < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_workers must be >= 1, got ", o.num_workers));
  }
  if (o.num_servers < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_servers must be >= 0, got ", o.num_servers));
  }
  if (o.num_servers > 0 && o.ps_server_bin.empty()) {
    return absl::InvalidArgumentError("num_servers > 0 but no ps_server_bin");
  }
  if (absl::Status s = o.network.Validate(); !s.ok()) return s;
  if (!o.timeline.empty()) {
    std::filesystem::path dir = std::filesystem::path(o.timeline).parent_path();
    if (dir.empty()) dir = ".";
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec) ||
        access(dir.c_str(), W_OK) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot write timeline ", o.timeline, ": ", dir.string(),
                       " is not a writable folder"));
    }
  }
  return absl::OkStatus();
}

// Merges the workers' timeline parts into o.timeline and deletes them.
// After a failed job (`job_ok` false) only the parts that exist are merged.
absl::Status MergeTimelineParts(const LocalJobOptions& o, bool job_ok) {
  std::vector<std::string> parts;
  for (int rank = 0; rank < o.num_workers; ++rank) {
    const std::string part = TimelinePartPath(o.timeline, rank);
    std::error_code ec;
    if (job_ok || std::filesystem::exists(part, ec)) parts.push_back(part);
  }
  if (parts.empty()) {
    return absl::NotFoundError(absl::StrCat("no worker wrote a timeline part ",
                                            TimelinePartPath(o.timeline, -1)));
  }
  if (absl::Status s = MergeTimelines(parts, o.timeline); !s.ok()) {
    return absl::Status(
        s.code(), absl::StrCat("merging the workers' timelines: ", s.message(),
                               " (parts kept)"));
  }
  for (const std::string& part : parts) {
    std::error_code ec;
    std::filesystem::remove(part, ec);
  }
  return absl::OkStatus();
}

// A fresh random token in a private temporary folder, deleted with it.
class GeneratedTokenFile {
 public:
  static absl::StatusOr<std::unique_ptr<GeneratedTokenFile>> Create() {
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = absl::StrCat(tmp != nullptr && *tmp ? tmp : "/tmp",
                                   "/ringside-job-XXXXXX");
    if (mkdtemp(dir.data()) == nullptr) {
      return absl::UnavailableError(
          absl::StrCat("cannot create a folder for the job's token: ", dir,
                       ": ", std::strerror(errno)));
    }
    std::unique_ptr<GeneratedTokenFile> file(new GeneratedTokenFile(dir));
    absl::StatusOr<std::string> token = GenerateAuthToken();
    if (!token.ok()) return token.status();
    if (absl::Status s = WriteAuthTokenFile(file->path(), *token); !s.ok()) {
      return s;
    }
    return file;
  }
  ~GeneratedTokenFile() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string path() const { return dir_ + "/auth_token"; }

 private:
  explicit GeneratedTokenFile(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

// The common/security_flags.h flags for `files` (empty fields left out).
std::vector<std::string> SecurityArgs(const GrpcSecurityFiles& files) {
  std::vector<std::string> args;
  for (const auto& [flag, value] :
       {std::pair<const char*, const std::string&>{"auth_token_file",
                                                   files.auth_token_file},
        {"tls_cert", files.tls_cert},
        {"tls_key", files.tls_key},
        {"tls_ca", files.tls_ca},
        {"tls_server_name", files.tls_server_name}}) {
    if (!value.empty()) args.push_back(absl::StrCat("--", flag, "=", value));
  }
  return args;
}

std::string ServerLabel(int shard) { return absl::StrCat("server/", shard); }
std::string WorkerLabel(int rank) { return absl::StrCat("worker/", rank); }

// Starts the servers and waits for each one's listening line. Each shard's
// reader thread writes its own elements of `ports` and `finals` (as the
// workers' threads do with result.finals), read once the group has ended.
absl::Status StartServers(const LocalJobOptions& o, const JobNetwork& net,
                          ProcessGroup& group, std::vector<int>& ports,
                          std::vector<json>& finals) {
  ports.assign(o.num_servers, 0);
  finals.assign(o.num_servers, json::object());
  std::vector<int> ids;
  for (int shard = 0; shard < o.num_servers; ++shard) {
    ChildSpec spec;
    spec.label = ServerLabel(shard);
    spec.argv = {o.ps_server_bin,
                 "--port=0",
                 absl::StrCat("--host=", net.Host(JobNetwork::kServer, shard)),
                 absl::StrCat("--num_workers=", o.num_workers),
                 absl::StrCat("--shard=", shard),
                 absl::StrCat("--num_shards=", o.num_servers)};
    spec.argv.insert(spec.argv.end(), o.server_args.begin(),
                     o.server_args.end());
    net.Place(JobNetwork::kServer, shard, spec.argv);
    spec.env = o.env;
    spec.on_stdout_line = [&o, &ports, &finals, shard](
                              const std::string& label,
                              absl::string_view line) {
      const json j = ParseObject(line);
      if (StringField(j, "event") == "server_final") finals[shard] = j;
      if (StringField(j, "event") == "listening" && j.contains("port") &&
          j["port"].is_number_integer() && j["port"].get<int>() > 0) {
        ports[shard] = j["port"].get<int>();
      } else if (j.is_object() && o.on_server_record) {
        o.on_server_record(shard, line, j);
      } else {
        ToStderr(label, line);
      }
    };
    absl::StatusOr<int> id = group.Start(std::move(spec));
    if (!id.ok()) return id.status();
    ids.push_back(*id);
  }
  auto all_listening = [&] {
    for (int shard = 0; shard < o.num_servers; ++shard) {
      if (ports[shard] == 0) return false;
    }
    return true;
  };
  auto listening_or_exited = [&] {
    for (int shard = 0; shard < o.num_servers; ++shard) {
      if (ports[shard] == 0 && group.exited(ids[shard])) return true;
    }
    return all_listening();
  };
  absl::StatusOr<bool> ok =
      group.RunUntil(listening_or_exited, o.listen_timeout);
  if (!ok.ok()) return ok.status();
  if (all_listening()) return absl::OkStatus();
  // Name the culprit before Shutdown() makes every server "exited".
  absl::Status error = absl::InternalError("no server missing");
  for (int shard = o.num_servers - 1; shard >= 0; --shard) {
    if (ports[shard] != 0) continue;
    if (group.exited(ids[shard])) {
      error = absl::FailedPreconditionError(absl::StrCat(
          ServerLabel(shard), " exited with code ", group.exit_code(ids[shard]),
          " before printing its listening line"));
      break;
    }
    error = absl::DeadlineExceededError(
        absl::StrCat(ServerLabel(shard), " printed no listening line within ",
                     absl::FormatDuration(o.listen_timeout)));
  }
  group.Shutdown();
  return error;
}

// Runs the processes of a validated job; every child has exited or been
// killed when it returns.
absl::Status RunJob(const LocalJobOptions& o, LocalJobResult& result) {
  // Declared before the group: the namespaces go after the processes.
  const std::unique_ptr<JobNetwork> net =
      JobNetwork::Start(o.network, o.host, o.num_servers, o.num_workers,
                        o.servers_beside_rank0);
  result.network = net->Describe();
  for (const std::string& w : net->Warnings()) result.warnings.push_back(w);
  if (o.servers_beside_rank0 && o.num_servers > 0 && !net->shaped()) {
    result.warnings.push_back(
        "servers beside rank 0: the job runs on loopback, where every "
        "process shares one namespace, so the placement changes nothing");
  }
  ProcessGroupOptions group_options;
  group_options.deadline = o.deadline;
  group_options.kill_grace = o.kill_grace;
  group_options.relay_stderr = o.relay_stderr;
  ProcessGroup group(group_options);
  result.finals.assign(o.num_workers, json());
  result.steps.assign(o.num_workers, {});
  const Stopwatch clock;

  if (absl::Status s = StartServers(o, *net, group, result.server_ports,
                                    result.server_finals);
      !s.ok()) {
    return s;
  }
  std::vector<std::string> addresses;
  for (int shard = 0; shard < o.num_servers; ++shard) {
    addresses.push_back(absl::StrCat(net->Host(JobNetwork::kServer, shard), ":",
                                     result.server_ports[shard]));
  }

  std::vector<int> worker_ids;
  int master_port = 0;
  for (int rank = 0; rank < o.num_workers; ++rank) {
    ChildSpec spec;
    spec.label = WorkerLabel(rank);
    spec.argv = {o.worker_bin};
    spec.argv.insert(spec.argv.end(), o.worker_prefix_args.begin(),
                     o.worker_prefix_args.end());
    spec.argv.insert(
        spec.argv.end(),
        {absl::StrCat("--strategy=", o.strategy), absl::StrCat("--rank=", rank),
         absl::StrCat("--world_size=", o.num_workers)});
    if (!addresses.empty()) {
      spec.argv.push_back(
          absl::StrCat("--servers=", absl::StrJoin(addresses, ",")));
    }
    if (o.rendezvous) {
      spec.argv.push_back(
          absl::StrCat("--master_addr=", net->Host(JobNetwork::kWorker, 0)));
      spec.argv.push_back(absl::StrCat("--master_port=", master_port));
    }
    if (!o.timeline.empty()) {
      spec.argv.push_back(
          absl::StrCat("--timeline=", TimelinePartPath(o.timeline, -1)));
    }
    spec.argv.insert(spec.argv.end(), o.worker_args.begin(),
                     o.worker_args.end());
    net->Place(JobNetwork::kWorker, rank, spec.argv);
    spec.env = o.env;
    spec.on_stdout_line = [&o, &result, &master_port, rank](
                              const std::string& label,
                              absl::string_view line) {
      json j = ParseObject(line);
      if (j.is_null()) {
        ToStderr(label, line);
        return;
      }
      if (o.on_record) o.on_record(rank, line, j);
      const std::string event = StringField(j, "event");
      if (event == "rendezvous" && rank == 0 &&
          j["master_port"].is_number_integer()) {
        master_port = j["master_port"].get<int>();
      } else if (event == "final") {
        result.finals[rank] = std::move(j);
      } else if (event == "step" && o.keep_steps) {
        result.steps[rank].push_back(std::move(j));
      }
    };
    absl::StatusOr<int> id = group.Start(std::move(spec));
    if (!id.ok()) return id.status();
    worker_ids.push_back(*id);
    if (o.rendezvous && rank == 0) {
      absl::StatusOr<bool> up = group.RunUntil(
          [&master_port] { return master_port > 0; }, o.listen_timeout);
      if (!up.ok()) return up.status();
      if (!*up) {
        return absl::DeadlineExceededError(absl::StrCat(
            WorkerLabel(0), " did not announce its rendezvous store within ",
            absl::FormatDuration(o.listen_timeout)));
      }
    }
  }

  auto workers_done = [&] {
    for (int id : worker_ids) {
      if (!group.exited(id)) return false;
    }
    return true;
  };
  absl::StatusOr<bool> done =
      group.RunUntil(workers_done, absl::InfiniteDuration());
  if (!done.ok()) return done.status();
  result.wall_s = clock.ElapsedSeconds();
  for (int rank = 0; rank < o.num_workers; ++rank) {
    if (result.finals[rank].is_null()) {
      return absl::DataLossError(
          absl::StrCat(WorkerLabel(rank),
                       " exited with code 0 but printed no "
                       "{\"event\":\"final\"} record"));
    }
  }

  // Servers exit by themselves once every worker has finished.
  done = group.RunUntil([&] { return group.RunningLabels().empty(); },
                        o.server_exit_timeout);
  if (!done.ok()) return done.status();
  if (!*done) {
    for (const std::string& label : group.Shutdown()) {
      result.warnings.push_back(
          absl::StrCat(label, " was still running ",
                       absl::FormatDuration(o.server_exit_timeout),
                       " after the workers finished and was terminated"));
    }
  }
  return absl::OkStatus();
}

// Runs `worker_bin flag` to completion within `timeout`, handing each line
// it prints to `on_line` as a JSON object (empty when the line is not one)
// and as text.
absl::Status AskWorker(
    const std::string& worker_bin, const std::string& flag,
    absl::Duration timeout,
    const std::function<void(const json&, absl::string_view)>& on_line) {
  ProcessGroupOptions group_options;
  group_options.deadline = timeout;
  ChildSpec spec;
  spec.label = absl::StrCat("worker ", flag);
  spec.argv = {worker_bin, flag};
  spec.on_stdout_line = [&](const std::string&, absl::string_view line) {
    on_line(ParseObject(line), line);
  };
  return RunToCompletion(std::move(spec), group_options);
}

}  // namespace

absl::StatusOr<LocalJobResult> RunLocalJob(const LocalJobOptions& options) {
  if (absl::Status s = Validate(options); !s.ok()) return s;
  // The security flags go first into every process's extra flags.
  LocalJobOptions o = options;
  std::unique_ptr<GeneratedTokenFile> token;
  if (o.security.auth_token_file.empty() && o.generate_auth_token) {
    absl::StatusOr<std::unique_ptr<GeneratedTokenFile>> made =
        GeneratedTokenFile::Create();
    if (!made.ok()) return made.status();
    token = *std::move(made);
    o.security.auth_token_file = token->path();
  }
  // Bad security files fail here, before any process starts.
  if (absl::Status s = LoadGrpcSecurity(o.security).status(); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("job security: ", s.message()));
  }
  const std::vector<std::string> security = SecurityArgs(o.security);
  o.server_args.insert(o.server_args.begin(), security.begin(), security.end());
  o.worker_args.insert(o.worker_args.begin(), security.begin(), security.end());
  LocalJobResult result;
  const absl::Status job = RunJob(o, result);
  if (!o.timeline.empty()) {
    const absl::Status merged = MergeTimelineParts(o, job.ok());
    if (job.ok() && !merged.ok()) return merged;
    if (!job.ok()) {
      ToStderr("timeline", merged.ok()
                               ? absl::StrCat("merged what the failed job's "
                                              "workers wrote into ",
                                              o.timeline)
                               : std::string(merged.message()));
    }
  }
  if (!job.ok()) return job;
  for (const std::string& w : StarvedLoopWarnings(result.finals)) {
    result.warnings.push_back(w);
  }
  return result;
}

std::vector<std::string> StarvedLoopWarnings(
    const std::vector<json>& finals) {
  std::vector<std::string> warnings;
  for (size_t rank = 0; rank < finals.size(); ++rank) {
    const json& f = finals[rank];
    if (!f.is_object() || !f.contains("gloo_loop")) continue;
    const json& loop = f["gloo_loop"];
    const double wait = loop.value("wait_s", 0.0);
    const double wall = f.value("wall_s", 0.0);
    if (wall <= 0 || wait <= kStarvedLoopShare * wall) continue;
    warnings.push_back(absl::StrFormat(
        "worker/%d: Gloo's event loop waited %.1f s for a core during a "
        "%.1f s run (starved: its collectives were slowed by other "
        "threads or processes on the cores; --gloo_event_loop=%s)",
        rank, wait, wall,
        loop.value("policy", std::string("?"))));
  }
  return warnings;
}

std::string TimelinePartPath(const std::string& timeline, int rank) {
  return absl::StrCat(timeline, ".rank",
                      rank < 0 ? "{rank}" : absl::StrCat(rank), ".json");
}

bool ListedStrategy::Reads(const std::string& flag) const {
  return std::find(options.begin(), options.end(), flag) != options.end();
}

absl::StatusOr<std::vector<ListedStrategy>> ListStrategies(
    const std::string& worker_bin, absl::Duration timeout) {
  std::vector<ListedStrategy> strategies;
  std::string bad_line;
  const auto on_line = [&](const json& j, absl::string_view line) {
    ListedStrategy info;
    info.name = StringField(j, "name");
    const std::string servers = StringField(j, "servers");
    if (servers == "one") {
      info.servers = ServerKind::kOne;
    } else if (servers == "sharded") {
      info.servers = ServerKind::kSharded;
    } else if (servers != "none") {
      info.name.clear();
    }
    if (info.name.empty()) {
      if (bad_line.empty()) bad_line = std::string(line);
      return;
    }
    info.store = j.value("store", false);
    info.summation_servers = j.value("summation_servers", false);
    info.display_name = j.value("display_name", info.name);
    info.study_order = j.value("study_order", 100);
    info.modelled_as = j.value("modelled_as", "");
    info.wire_bytes_per_model_byte = j.value("wire_bytes_per_model_byte", 1.0);
    info.updates = j.value("updates", "");
    info.default_sweep = j.value("default_sweep", true);
    info.cuda_runs = j.value("cuda_runs", true);
    info.cuda = j.value("cuda", "");
    info.gpu_per_rank = j.value("gpu_per_rank", false);
    for (auto [field, out] :
         {std::pair<const char*, std::vector<std::string>*>{"options",
                                                            &info.options},
          {"study_flags", &info.study_flags},
          {"variant_options", &info.variant_options}}) {
      if (!j.contains(field) || !j[field].is_array()) continue;
      for (const json& o : j[field]) {
        if (o.is_string()) out->push_back(o.get<std::string>());
      }
    }
    strategies.push_back(std::move(info));
  };
  RS_RETURN_IF_ERROR(
      AskWorker(worker_bin, "--list_strategies", timeout, on_line));
  if (!bad_line.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        worker_bin, " --list_strategies printed an unexpected line: ", bad_line,
        " (want {\"name\":..,\"servers\":\"none|one|sharded\"})"));
  }
  if (strategies.empty()) {
    return absl::NotFoundError(
        absl::StrCat(worker_bin, " --list_strategies listed no strategy"));
  }
  std::stable_sort(strategies.begin(), strategies.end(),
                   [](const ListedStrategy& a, const ListedStrategy& b) {
                     return a.study_order < b.study_order;
                   });
  return strategies;
}

absl::StatusOr<WorkerGpus> CountWorkerGpus(const std::string& worker_bin,
                                           absl::Duration timeout) {
  std::optional<WorkerGpus> gpus;
  std::string bad_line;
  const auto on_line = [&](const json& j, absl::string_view line) {
    if (j.contains("cuda_devices") && j["cuda_devices"].is_number_integer() &&
        j["cuda_devices"].get<int>() >= 0) {
      gpus = WorkerGpus{j["cuda_devices"].get<int>(), j.value("why", "")};
    } else if (bad_line.empty()) {
      bad_line = std::string(line);
    }
  };
  RS_RETURN_IF_ERROR(AskWorker(worker_bin, "--count_gpus", timeout, on_line));
  if (!gpus.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        worker_bin, " --count_gpus printed ",
        bad_line.empty() ? "nothing" : absl::StrCat("'", bad_line, "'"),
        " (want {\"cuda_devices\":N})"));
  }
  return *gpus;
}

std::vector<std::string> WorkerArgsFor(
    const ListedStrategy& strategy, const std::vector<ListedStrategy>& listed,
    const std::vector<std::string>& worker_args,
    std::vector<std::string>* dropped) {
  // The flag a worker argument names ("" for none), and whether its value
  // is the next argument.
  auto flag_of = [](const std::string& arg, bool* value_follows) {
    *value_follows = false;
    if (!absl::StartsWith(arg, "--")) return std::string();
    std::string name = arg.substr(2);
    const size_t eq = name.find('=');
    if (eq != std::string::npos) return name.substr(0, eq);
    *value_follows = true;  // unless a boolean: decided by the caller
    return name;
  };
  auto specific = [&listed](const std::string& flag) {
    for (const ListedStrategy& s : listed) {
      if (s.Reads(flag)) return true;
    }
    return false;
  };
  std::vector<std::string> kept;
  for (size_t i = 0; i < worker_args.size(); ++i) {
    bool value_follows = false;
    std::string flag = flag_of(worker_args[i], &value_follows);
    // --noflag: the boolean flag's negation.
    if (!flag.empty() && !specific(flag) && absl::StartsWith(flag, "no") &&
        specific(flag.substr(2))) {
      flag = flag.substr(2);
      value_follows = false;
    }
    if (flag.empty() || !specific(flag) || strategy.Reads(flag)) {
      kept.push_back(worker_args[i]);
      continue;
    }
    std::string written = worker_args[i];
    // "--flag value": the value goes too, unless it is another flag.
    if (value_follows && i + 1 < worker_args.size() &&
        !absl::StartsWith(worker_args[i + 1], "--")) {
      written += " " + worker_args[++i];
    }
    if (dropped != nullptr) dropped->push_back(written);
  }
  return kept;
}

int ServersFor(ServerKind kind, int sharded_count) {
  switch (kind) {
    case ServerKind::kNone:
      return 0;
    case ServerKind::kOne:
      return 1;
    case ServerKind::kSharded:
      return sharded_count;
  }
  return 0;
}

absl::StatusOr<std::string> FindBinary(const std::string& argv0,
                                       absl::string_view workspace_path) {
  using bazel::tools::cpp::runfiles::Runfiles;
  std::string error;
  std::unique_ptr<Runfiles> runfiles(Runfiles::Create(argv0, &error));
  if (runfiles == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("no runfiles to find ", workspace_path, " in: ", error));
  }
  const std::string path =
      runfiles->Rlocation(absl::StrCat("ringside/", workspace_path));
  if (path.empty() || access(path.c_str(), X_OK) != 0) {
    return absl::NotFoundError(absl::StrCat(
        workspace_path, " is not an executable in the runfiles (looked at '",
        path, "')"));
  }
  return path;
}

std::vector<std::string> SplitPassThroughArgs(int* argc, char** argv) {
  std::vector<std::string> rest;
  for (int i = 1; i < *argc; ++i) {
    if (std::string(argv[i]) != "--") continue;
    for (int j = i + 1; j < *argc; ++j) rest.push_back(argv[j]);
    *argc = i;
    break;
  }
  return rest;
}

absl::Status ParseOwnFlags(int argc, char** argv) {
  const std::vector<char*> rest = absl::ParseCommandLine(argc, argv);
  if (rest.size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unexpected argument '", rest[1], "' (worker flags go after --)"));
  }
  return absl::OkStatus();
}

}  // namespace ringside

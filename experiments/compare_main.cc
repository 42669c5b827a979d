// compare: runs the baseline (1 worker) and then every other strategy with
// N workers on this machine, and prints the table of the GPT-2 data-parallel
// study (see report.h). Writes compare.md, compare.csv and compare.json to
// --out_dir, and with --timeline one Chrome-trace timeline per strategy,
// timeline_<strategy>.json (open in ui.perfetto.dev). Flags after -- go to
// every worker.
//
//   compare --workers=4 --servers=4 --strategies=baseline,sps,dps
//     --steps=40 -- --lr=0.05
//
// A failing strategy is reported and skipped; the exit code is then 1.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "experiments/local_job.h"
#include "experiments/report.h"

ABSL_FLAG(int, workers, 4, "Workers N for every strategy but the baseline.");
ABSL_FLAG(int, servers, 4, "Servers K for 'sharded' strategies (sps: 1).");
ABSL_FLAG(std::string, strategies, "",
          "Comma-separated strategies; default: all registered. The "
          "baseline always runs first.");
ABSL_FLAG(int, steps, 40, "Training steps per worker.");
ABSL_FLAG(int, warmup_steps, 5, "Warm-up steps excluded from the measures.");
ABSL_FLAG(int, batch_size, 32, "Local batch size per worker.");
ABSL_FLAG(std::string, model, "mlp", "Model name passed to the workers.");
ABSL_FLAG(bool, verbose, false,
          "Relay every process's log lines (stderr); failures always show "
          "the failing process's last lines.");
ABSL_FLAG(std::string, out_dir, "out",
          "Directory for compare.md, compare.csv, compare.json (created).");
ABSL_FLAG(bool, timeline, false,
          "Also write <out_dir>/timeline_<strategy>.json per strategy run: a "
          "Chrome-trace timeline of every worker (ui.perfetto.dev).");
ABSL_FLAG(absl::Duration, deadline, absl::Minutes(10),
          "Wall-time limit of each strategy's run.");
ABSL_FLAG(std::string, ps_server_bin, "",
          "ps_server binary; default: server/ps_server from the runfiles.");
ABSL_FLAG(std::string, worker_bin, "",
          "worker binary; default: worker/worker from the runfiles.");

namespace ringside {
namespace {

using nlohmann::json;

absl::StatusOr<std::string> Binary(const std::string& flag_value,
                                   const char* argv0, const char* path,
                                   const char* flag_name) {
  if (!flag_value.empty()) return flag_value;
  absl::StatusOr<std::string> found = FindBinary(argv0, path);
  if (!found.ok()) {
    return absl::NotFoundError(absl::StrCat(found.status().message(),
                                            "; pass --", flag_name, "=PATH"));
  }
  return found;
}

// The strategies to run, baseline first.
absl::StatusOr<std::vector<StrategyInfo>> Plan(
    const std::vector<StrategyInfo>& registered, const std::string& flag) {
  std::map<std::string, StrategyInfo> by_name;
  std::vector<std::string> names;
  for (const StrategyInfo& s : registered) {
    by_name[s.name] = s;
    names.push_back(s.name);
  }
  std::vector<std::string> wanted =
      flag.empty() ? names
                   : std::vector<std::string>(
                         absl::StrSplit(flag, ',', absl::SkipWhitespace()));
  std::vector<StrategyInfo> plan;
  if (by_name.count("baseline") == 0) {
    return absl::NotFoundError("the worker registers no 'baseline' strategy");
  }
  plan.push_back(by_name["baseline"]);
  for (const std::string& name : wanted) {
    if (name == "baseline") continue;
    if (by_name.count(name) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown strategy '", name,
                       "'; registered: ", absl::StrJoin(names, ", ")));
    }
    plan.push_back(by_name[name]);
  }
  return plan;
}

// "1 worker", "4 workers".
std::string Count(int n, const char* noun) {
  return absl::StrCat(n, " ", noun, n == 1 ? "" : "s");
}

absl::Status WriteFile(const std::filesystem::path& path,
                       const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out)
    return absl::InternalError(absl::StrCat("cannot write ", path.string()));
  return absl::OkStatus();
}

// Runs everything; returns the process exit code.
int Run(const char* argv0, const std::vector<std::string>& extra) {
  auto fail = [](const absl::Status& s) {
    std::fprintf(stderr, "compare: %s\n", s.ToString().c_str());
    return 1;
  };
  absl::StatusOr<std::string> worker_bin = Binary(
      absl::GetFlag(FLAGS_worker_bin), argv0, "worker/worker", "worker_bin");
  if (!worker_bin.ok()) return fail(worker_bin.status());
  absl::StatusOr<std::vector<StrategyInfo>> registered =
      ListStrategies(*worker_bin);
  if (!registered.ok()) return fail(registered.status());
  absl::StatusOr<std::vector<StrategyInfo>> plan =
      Plan(*registered, absl::GetFlag(FLAGS_strategies));
  if (!plan.ok()) return fail(plan.status());
  std::string ps_server_bin;
  for (const StrategyInfo& s : *plan) {
    if (s.servers == ServerKind::kNone || !ps_server_bin.empty()) continue;
    absl::StatusOr<std::string> ps =
        Binary(absl::GetFlag(FLAGS_ps_server_bin), argv0, "server/ps_server",
               "ps_server_bin");
    if (!ps.ok()) return fail(ps.status());
    ps_server_bin = *ps;
  }

  std::filesystem::path dir = absl::GetFlag(FLAGS_out_dir);
  // Under `bazel run` the process runs in its runfiles tree; a relative
  // --out_dir means relative to where the user typed the command.
  if (const char* cwd = std::getenv("BUILD_WORKING_DIRECTORY");
      dir.is_relative() && cwd != nullptr) {
    dir = std::filesystem::path(cwd) / dir;
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return fail(absl::InternalError(
        absl::StrCat("cannot create ", dir.string(), ": ", ec.message())));
  }

  const int n = absl::GetFlag(FLAGS_workers);
  const int k = absl::GetFlag(FLAGS_servers);
  const unsigned cores = std::thread::hardware_concurrency();
  std::vector<std::string> worker_args = {
      absl::StrCat("--model=", absl::GetFlag(FLAGS_model)),
      absl::StrCat("--batch_size=", absl::GetFlag(FLAGS_batch_size)),
      absl::StrCat("--steps=", absl::GetFlag(FLAGS_steps)),
      absl::StrCat("--warmup_steps=", absl::GetFlag(FLAGS_warmup_steps))};
  worker_args.insert(worker_args.end(), extra.begin(), extra.end());

  std::vector<ReportRow> rows;
  std::vector<std::string> notes;
  json runs = json::array();
  json failures = json::array();
  for (size_t i = 0; i < plan->size(); ++i) {
    const StrategyInfo& s = (*plan)[i];
    LocalJobOptions options;
    options.ps_server_bin = ps_server_bin;
    options.worker_bin = *worker_bin;
    options.strategy = s.name;
    options.num_workers = s.name == "baseline" ? 1 : n;
    options.num_servers = ServersFor(s.servers, k);
    options.rendezvous = s.store;
    options.worker_args = worker_args;
    options.deadline = absl::GetFlag(FLAGS_deadline);
    options.relay_stderr = absl::GetFlag(FLAGS_verbose);
    if (absl::GetFlag(FLAGS_timeline)) {
      options.timeline = std::filesystem::absolute(
                             dir / absl::StrCat("timeline_", s.name, ".json"))
                             .string();
    }
    std::fprintf(stderr, "[%zu/%zu] %s: %s, %s\n", i + 1, plan->size(),
                 s.name.c_str(), Count(options.num_workers, "worker").c_str(),
                 Count(options.num_servers, "server").c_str());
    absl::StatusOr<LocalJobResult> result = RunLocalJob(options);
    absl::StatusOr<ReportRow> row =
        result.ok() ? RowFromFinals(s.name, options.num_servers, result->finals)
                    : absl::StatusOr<ReportRow>(result.status());
    if (!row.ok()) {
      std::fprintf(stderr, "[%zu/%zu] %s FAILED: %s\n", i + 1, plan->size(),
                   s.name.c_str(), row.status().ToString().c_str());
      failures.push_back(
          {{"strategy", s.name}, {"error", row.status().ToString()}});
      continue;
    }
    std::fprintf(stderr,
                 "[%zu/%zu] %s: %.1f samples/s, eval loss %.4g, %.1f s\n",
                 i + 1, plan->size(), s.name.c_str(), row->throughput,
                 row->eval_loss, result->wall_s);
    for (const std::string& w : result->warnings) {
      std::fprintf(stderr, "compare: warning: %s\n", w.c_str());
    }
    rows.push_back(*row);
    runs.push_back({{"strategy", s.name},
                    {"workers", options.num_workers},
                    {"servers", options.num_servers},
                    {"server_ports", result->server_ports},
                    {"wall_s", result->wall_s},
                    {"warnings", result->warnings},
                    {"finals", result->finals}});
    if (!options.timeline.empty()) runs.back()["timeline"] = options.timeline;
    const int procs = options.num_workers + options.num_servers;
    if (cores > 0 && procs > static_cast<int>(cores)) {
      notes.push_back(absl::StrCat(
          "Note: ", s.name, " ran ", Count(options.num_workers, "worker"),
          " + ", Count(options.num_servers, "server"), " on ", cores,
          " cores: utilization then measures the OS scheduler, not the "
          "strategy."));
    }
  }
  for (const json& f : failures) {
    notes.push_back(absl::StrCat("Failed: ", f["strategy"].get<std::string>(),
                                 ": ", f["error"].get<std::string>()));
  }

  std::string markdown = MarkdownTable(rows);
  if (!notes.empty()) markdown += "\n" + absl::StrJoin(notes, "\n\n") + "\n";
  std::printf("%s", markdown.c_str());
  std::fflush(stdout);

  json config = {{"workers", n},
                 {"servers", k},
                 {"steps", absl::GetFlag(FLAGS_steps)},
                 {"warmup_steps", absl::GetFlag(FLAGS_warmup_steps)},
                 {"batch_size", absl::GetFlag(FLAGS_batch_size)},
                 {"model", absl::GetFlag(FLAGS_model)},
                 {"worker_args", extra},
                 {"cores", cores}};
  json all = {{"config", config},
              {"report", JsonReport(rows)},
              {"runs", runs},
              {"failures", failures},
              {"notes", notes}};
  for (const absl::Status& s :
       {WriteFile(dir / "compare.md", markdown),
        WriteFile(dir / "compare.csv", CsvTable(rows)),
        WriteFile(dir / "compare.json", all.dump(2) + "\n")}) {
    if (!s.ok()) return fail(s);
  }
  std::fprintf(stderr, "compare: wrote %s/compare.{md,csv,json}%s\n",
               dir.string().c_str(),
               absl::GetFlag(FLAGS_timeline) ? " and timeline_*.json" : "");
  return failures.empty() ? 0 : 1;
}

}  // namespace
}  // namespace ringside

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Runs every strategy locally and prints the comparison table; flags "
      "after -- go to every worker.");
  const std::vector<std::string> extra =
      ringside::SplitPassThroughArgs(&argc, argv);
  const std::vector<char*> rest = absl::ParseCommandLine(argc, argv);
  if (rest.size() > 1) {
    std::fprintf(stderr,
                 "compare: unexpected argument '%s' (worker flags go after "
                 "--)\n",
                 rest[1]);
    return 2;
  }
  return ringside::Run(argv[0], extra);
}

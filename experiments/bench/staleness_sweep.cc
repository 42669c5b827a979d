// staleness_sweep: utilization, throughput and eval loss of async_ps
// (stale synchronous parallel) against its staleness bound tau, on this
// machine: one local job (K ps_server + N worker processes, as `launch`)
// per tau, then sps for reference, and one table.
//
//   staleness_sweep --workers=4 --servers=1 --staleness=0,1,2,4 --steps=60
//     [--json_out=out/staleness.json] -- --lr=0.05   (after --: worker flags)
//
//   | tau | W0 | W1 | W2 | W3 | Mean util | Total | Throughput | Eval loss |
//
// Utilization, throughput and eval loss are the workers' own "final"
// records (docs/DESIGN.md's definitions): mean and total over workers,
// throughput and eval loss of rank 0 (every rank ends with the same
// parameters). Exits 1 if any run fails.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "experiments/job/job_binaries.h"
#include "experiments/job/local_job.h"

ABSL_FLAG(int, workers, 4, "Workers N.");
ABSL_FLAG(int, servers, 1, "Parameter servers K (async_ps shards over K).");
ABSL_FLAG(std::string, staleness, "0,1,2,4",
          "Comma-separated staleness bounds tau to run.");
ABSL_FLAG(bool, with_sps, true, "Also run sps (tau = 0 must match it).");
ABSL_FLAG(int, steps, 60, "Training steps per worker.");
ABSL_FLAG(int, warmup_steps, 5, "Warm-up steps excluded from the measures.");
ABSL_FLAG(int, batch_size, 32, "Local batch size per worker.");
ABSL_FLAG(std::string, model, "mlp", "Model name passed to the workers.");
ABSL_FLAG(bool, verbose, false, "Relay every process's log lines.");
ABSL_FLAG(std::string, json_out, "",
          "Also write the rows (and every final record) here as JSON.");
ABSL_FLAG(absl::Duration, deadline, absl::Minutes(10),
          "Wall-time limit of each run.");

namespace ringside {
namespace {

using nlohmann::json;

struct Row {
  std::string label;  // "0", "1", ..., "sps"
  std::vector<double> utilization;
  double throughput = 0;
  double eval_loss = 0;
  double wall_s = 0;
  json finals;
};

absl::StatusOr<Row> RowOf(const std::string& label,
                          const LocalJobResult& result) {
  Row row;
  row.label = label;
  row.wall_s = result.wall_s;
  row.finals = result.finals;
  for (const json& f : result.finals) {
    if (!f.contains("utilization") || !f["utilization"].is_number()) {
      return absl::DataLossError("a final record lacks utilization");
    }
    row.utilization.push_back(f["utilization"].get<double>());
  }
  row.throughput = result.finals.at(0).value("throughput", 0.0);
  row.eval_loss = result.finals.at(0).value("eval_loss", 0.0);
  return row;
}

std::string Table(const std::vector<Row>& rows, int n) {
  std::string header = "| tau |";
  std::string rule = "|----:|";
  for (int r = 0; r < n; ++r) {
    absl::StrAppend(&header, " W", r, " |");
    absl::StrAppend(&rule, "----:|");
  }
  absl::StrAppend(&header,
                  " Mean util | Total | Throughput (samples/s) | Eval loss |");
  absl::StrAppend(&rule, "----------:|------:|-----------------------:|"
                         "----------:|");
  std::string out = header + "\n" + rule + "\n";
  for (const Row& row : rows) {
    double total = 0;
    std::string line = absl::StrCat("| ", row.label, " |");
    for (int r = 0; r < n; ++r) {
      const double u = r < static_cast<int>(row.utilization.size())
                           ? row.utilization[r]
                           : 0.0;
      total += u;
      absl::StrAppend(&line, absl::StrFormat(" %.0f%% |", 100 * u));
    }
    absl::StrAppend(&line,
                    absl::StrFormat(" %.0f%% | %.2f | %.1f | %.4f |",
                                    100 * total / n, total, row.throughput,
                                    row.eval_loss));
    out += line + "\n";
  }
  return out;
}

int Run(const char* argv0, const std::vector<std::string>& extra) {
  auto fail = [](const absl::Status& s) {
    std::fprintf(stderr, "staleness_sweep: %s\n", s.ToString().c_str());
    return 1;
  };
  absl::StatusOr<std::string> worker_bin = WorkerBinary(argv0);
  if (!worker_bin.ok()) return fail(worker_bin.status());
  absl::StatusOr<std::string> ps_bin = PsServerBinary(argv0);
  if (!ps_bin.ok()) return fail(ps_bin.status());
  std::vector<int> taus;
  for (absl::string_view t : absl::StrSplit(absl::GetFlag(FLAGS_staleness),
                                            ',', absl::SkipWhitespace())) {
    int tau = 0;
    if (!absl::SimpleAtoi(t, &tau) || tau < 0) {
      return fail(absl::InvalidArgumentError(
          absl::StrCat("--staleness: '", t, "' is not an integer >= 0")));
    }
    taus.push_back(tau);
  }
  const int n = absl::GetFlag(FLAGS_workers);
  const int k = absl::GetFlag(FLAGS_servers);
  std::vector<std::string> worker_args = {
      absl::StrCat("--model=", absl::GetFlag(FLAGS_model)),
      absl::StrCat("--batch_size=", absl::GetFlag(FLAGS_batch_size)),
      absl::StrCat("--steps=", absl::GetFlag(FLAGS_steps)),
      absl::StrCat("--warmup_steps=", absl::GetFlag(FLAGS_warmup_steps))};
  worker_args.insert(worker_args.end(), extra.begin(), extra.end());

  struct Plan {
    std::string label, strategy;
    int servers;
    std::vector<std::string> args;
  };
  std::vector<Plan> plan;
  for (int tau : taus) {
    std::vector<std::string> args = worker_args;
    args.push_back(absl::StrCat("--staleness=", tau));
    plan.push_back({std::to_string(tau), "async_ps", k, args});
  }
  if (absl::GetFlag(FLAGS_with_sps)) {
    plan.push_back({"sps", "sps", 1, worker_args});
  }
  std::vector<Row> rows;
  bool failed = false;
  for (size_t i = 0; i < plan.size(); ++i) {
    LocalJobOptions options;
    options.ps_server_bin = *ps_bin;
    options.worker_bin = *worker_bin;
    options.strategy = plan[i].strategy;
    options.num_workers = n;
    options.num_servers = plan[i].servers;
    options.worker_args = plan[i].args;
    options.deadline = absl::GetFlag(FLAGS_deadline);
    options.relay_stderr = absl::GetFlag(FLAGS_verbose);
    std::fprintf(stderr, "[%zu/%zu] %s%s\n", i + 1, plan.size(),
                 plan[i].strategy.c_str(),
                 plan[i].strategy == "async_ps"
                     ? absl::StrCat(" tau=", plan[i].label).c_str()
                     : "");
    absl::StatusOr<LocalJobResult> result = RunLocalJob(options);
    absl::StatusOr<Row> row =
        result.ok() ? RowOf(plan[i].label, *result)
                    : absl::StatusOr<Row>(result.status());
    if (!row.ok()) {
      std::fprintf(stderr, "[%zu/%zu] FAILED: %s\n", i + 1, plan.size(),
                   row.status().ToString().c_str());
      failed = true;
      continue;
    }
    rows.push_back(*row);
  }
  const std::string table = Table(rows, n);
  std::printf("%s", table.c_str());
  const unsigned cores = std::thread::hardware_concurrency();
  if (cores > 0 && n + k > static_cast<int>(cores)) {
    std::printf(
        "\nNote: %d workers + %d servers on %u cores: utilization then "
        "measures the OS scheduler as much as the strategy.\n",
        n, k, cores);
  }
  if (std::string path = absl::GetFlag(FLAGS_json_out); !path.empty()) {
    // Under `bazel run`, relative to where the command was typed.
    if (const char* cwd = std::getenv("BUILD_WORKING_DIRECTORY");
        path[0] != '/' && cwd != nullptr) {
      path = absl::StrCat(cwd, "/", path);
    }
    json out = {{"workers", n},
                {"servers", k},
                {"steps", absl::GetFlag(FLAGS_steps)},
                {"worker_args", worker_args},
                {"cores", cores},
                {"rows", json::array()}};
    for (const Row& row : rows) {
      out["rows"].push_back({{"tau", row.label},
                             {"utilization", row.utilization},
                             {"throughput", row.throughput},
                             {"eval_loss", row.eval_loss},
                             {"wall_s", row.wall_s},
                             {"finals", row.finals}});
    }
    std::ofstream file(path);
    file << out.dump(2) << "\n";
    if (!file) return fail(absl::InternalError("cannot write " + path));
  }
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace ringside

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "async_ps utilization, throughput and eval loss against the staleness "
      "bound; flags after -- go to every worker.");
  const std::vector<std::string> extra =
      ringside::SplitPassThroughArgs(&argc, argv);
  if (const absl::Status parsed = ringside::ParseOwnFlags(argc, argv);
      !parsed.ok()) {
    std::fprintf(stderr, "staleness_sweep: %s\n", std::string(parsed.message()).c_str());
    return 2;
  }
  return ringside::Run(argv[0], extra);
}

#include "experiments/comparison/compare_plan.h"

#include <map>
#include <set>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace ringside::compare {
namespace {

// The training flags a --strategies entry may set for its own run besides
// the strategy's options, with their short labels in the row's name: the
// batch per worker and the passes per step (the study's batch sizes, the
// compute-to-communication ratio), the optimizer, its learning rate and
// momentum (a method's own setting, e.g. ring_topk@optimizer=sgd@lr=0.1),
// the warm-up, the scaling rule, the synthetic model's emulated compute
// (a faster device or precision) and the arithmetic of real compute
// (precision=bf16 on CUDA workers).
const std::map<std::string, std::string>& RunTrainingFlags() {
  static const auto* flags = new std::map<std::string, std::string>{
      {"batch_size", "b"},
      {"accumulate_steps", "k"},
      {"optimizer", "optimizer"},
      {"lr", "lr"},
      {"momentum", "μ"},
      {"lr_warmup_steps", "warm-up"},
      {"lr_scaling", "lr scaling"},
      {"emulated_compute_ms", "compute_ms"},
      {"precision", "precision"}};
  return *flags;
}

// The job's own settings a --strategies entry may set (not worker flags):
// placement=rank0 runs a one-server strategy's server in rank 0's
// namespace, behind its link (PyTorch DataParallel's layout).
constexpr absl::string_view kPlacementFlag = "placement";

// One --strategies entry, NAME[@FLAG=VALUE...]: the listing of NAME with
// its run flags, each named in the row (training flags by their short
// label, "SPS [b=8]"; the strategy's own by name, "Ring FP16
// [ring_bucket_kb=0]", except those its variant states, which the row's
// "(τ=8)" names), so that two settings never share a row name;
// INVALID_ARGUMENT when a FLAG is neither one NAME reads nor a
// RunTrainingFlags one.
absl::StatusOr<ListedStrategy> WithRunFlags(ListedStrategy listed,
                                            absl::string_view entry) {
  const std::vector<std::string> parts = absl::StrSplit(entry, '@');
  std::vector<std::string> labels;
  for (size_t i = 1; i < parts.size(); ++i) {
    const size_t eq = parts[i].find('=');
    const std::string flag = parts[i].substr(0, eq);
    if (flag == kPlacementFlag && eq != std::string::npos) {
      const std::string value = parts[i].substr(eq + 1);
      if (value != "rank0" || listed.servers != ServerKind::kOne) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--strategies entry '", entry, "': '", parts[i],
            "': placement=rank0 (the server beside rank 0, PyTorch "
            "DataParallel's layout) is the one placement, and only for a "
            "strategy with one parameter server (sps)"));
      }
      listed.servers_beside_rank0 = true;
      labels.push_back("server beside rank 0");
      continue;
    }
    const auto training = RunTrainingFlags().find(flag);
    if (eq == std::string::npos ||
        (!listed.Reads(flag) && training == RunTrainingFlags().end())) {
      std::vector<std::string> known = listed.options;
      for (const auto& [name, label] : RunTrainingFlags())
        known.push_back(name);
      return absl::InvalidArgumentError(
          absl::StrCat("--strategies entry '", entry, "': '", parts[i],
                       "' is not FLAG=VALUE for a flag ", listed.name,
                       " reads (", absl::StrJoin(known, ", "), ")"));
    }
    listed.run_flags.push_back(absl::StrCat("--", parts[i]));
    if (absl::c_linear_search(listed.variant_options, flag)) continue;
    labels.push_back(absl::StrCat(
        training != RunTrainingFlags().end() ? training->second : flag, "=",
        parts[i].substr(eq + 1)));
  }
  if (!labels.empty()) {
    absl::StrAppend(&listed.display_name, " [", absl::StrJoin(labels, ", "),
                    "]");
  }
  return listed;
}

}  // namespace

absl::StatusOr<std::vector<ListedStrategy>> Plan(
    const std::vector<ListedStrategy>& registered,
    const std::string& strategies) {
  std::map<std::string, ListedStrategy> by_name;
  std::vector<std::string> names;
  for (const ListedStrategy& s : registered) {
    by_name[s.name] = s;
    names.push_back(s.name);
  }
  std::vector<std::string> wanted;
  if (strategies == "all") {
    wanted = names;
  } else if (!strategies.empty()) {
    wanted = absl::StrSplit(strategies, ',', absl::SkipWhitespace());
  } else {
    for (const ListedStrategy& s : registered) {
      if (s.default_sweep) wanted.push_back(s.name);
    }
  }
  std::vector<ListedStrategy> plan;
  if (by_name.count("baseline") == 0) {
    return absl::NotFoundError("the worker registers no 'baseline' strategy");
  }
  plan.push_back(by_name["baseline"]);
  for (const std::string& entry : wanted) {
    const std::string name = entry.substr(0, entry.find('@'));
    // The plain baseline runs first anyway; one with run flags (another
    // emulated compute) is a reference row of its own, at n = 1.
    if (entry == "baseline") continue;
    if (by_name.count(name) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown strategy '", name,
                       "'; registered: ", absl::StrJoin(names, ", ")));
    }
    absl::StatusOr<ListedStrategy> listed = WithRunFlags(by_name[name], entry);
    if (!listed.ok()) return listed.status();
    plan.push_back(*std::move(listed));
  }
  return plan;
}

int GpusNeeded(const ListedStrategy& strategy, int workers,
               bool gpu_per_worker) {
  return strategy.gpu_per_rank || gpu_per_worker ? workers : 1;
}

absl::StatusOr<std::vector<int>> WorkerCounts(
    const std::vector<std::string>& workers) {
  std::set<int> counts;
  for (const std::string& s : workers) {
    int n = 0;
    if (!absl::SimpleAtoi(s, &n) || n < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--workers wants worker counts >= 1 such as 1,2,4; got '", s, "'"));
    }
    counts.insert(n);
  }
  if (counts.empty()) {
    return absl::InvalidArgumentError("--workers lists no worker count");
  }
  return std::vector<int>(counts.begin(), counts.end());
}

}  // namespace ringside::compare

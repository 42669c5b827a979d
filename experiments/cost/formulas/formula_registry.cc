#include "experiments/cost/formulas/formula_registry.h"

#include <glog/logging.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace ringside {
namespace {

struct Entry {
  std::unique_ptr<StrategyFormula> formula;
  int table_order = 0;
};

struct Registry {
  absl::Mutex mu;
  std::map<std::string, Entry, std::less<>> by_name ABSL_GUARDED_BY(mu);
};

Registry& GetRegistry() {
  static Registry* registry = new Registry;
  return *registry;
}

}  // namespace

double StrategyFormula::CommCpuDemandSeconds(const CostInputs& in,
                                             const Prediction& p) const {
  return static_cast<double>(in.workers) * p.cpu_s;
}

bool FormulaRegistry::Register(std::unique_ptr<StrategyFormula> formula,
                               int table_order) {
  CHECK(formula != nullptr) << "a null cost formula registered";
  Registry& r = GetRegistry();
  absl::MutexLock lock(&r.mu);
  std::string name = formula->name();
  CHECK(!name.empty()) << "a cost formula registered without a name";
  CHECK(r.by_name.count(name) == 0)
      << "cost formula '" << name << "' registered twice";
  r.by_name.emplace(std::move(name), Entry{std::move(formula), table_order});
  return true;
}

const StrategyFormula* FormulaRegistry::Find(absl::string_view name) {
  Registry& r = GetRegistry();
  absl::MutexLock lock(&r.mu);
  auto it = r.by_name.find(name);
  return it == r.by_name.end() ? nullptr : it->second.formula.get();
}

std::vector<std::string> FormulaRegistry::OptionFlags() {
  std::set<std::string> flags;
  for (const std::string& name : Names()) {
    for (std::string& flag : Find(name)->options()) {
      flags.insert(std::move(flag));
    }
  }
  return {flags.begin(), flags.end()};
}

std::optional<std::string> FormulaRegistry::StudyFlag(
    absl::string_view formula, absl::string_view flag) {
  const StrategyFormula* f = Find(formula);
  if (f == nullptr) return std::nullopt;
  const std::string prefix = absl::StrCat("--", flag, "=");
  for (const std::string& study : f->study_flags()) {
    if (absl::StartsWith(study, prefix)) return study.substr(prefix.size());
  }
  return std::nullopt;
}

std::vector<std::string> FormulaRegistry::Names() {
  Registry& r = GetRegistry();
  std::vector<std::pair<int, std::string>> ordered;
  {
    absl::MutexLock lock(&r.mu);
    for (const auto& [name, entry] : r.by_name) {
      ordered.emplace_back(entry.table_order, name);
    }
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) {
                     return a.first < b.first;
                   });
  std::vector<std::string> names;
  for (auto& [order, name] : ordered) names.push_back(std::move(name));
  return names;
}

}  // namespace ringside

#include "worker/sync_strategy.h"

#include <glog/logging.h>

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"

namespace ringside {
namespace {

struct Registry {
  absl::Mutex mu;
  std::map<std::string, StrategyInfo> by_name ABSL_GUARDED_BY(mu);
};

Registry& GetRegistry() {
  static Registry* registry = new Registry;
  return *registry;
}

}  // namespace

absl::Status SyncOptions::Validate() const {
  if (rpc_timeout <= absl::ZeroDuration() ||
      connect_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("timeouts must be positive");
  }
  if (absl::Status s = strategy.Validate(); !s.ok()) return s;
  if (absl::Status s = security.Validate(); !s.ok()) return s;
  return absl::OkStatus();
}

const char* ServerNeedName(ServerNeed need) {
  switch (need) {
    case ServerNeed::kNone:
      return "none";
    case ServerNeed::kOne:
      return "one";
    case ServerNeed::kSharded:
      return "sharded";
  }
  return "none";
}

bool StrategyInfo::Reads(const std::string& flag) const {
  return std::find(options.begin(), options.end(), flag) != options.end();
}

bool StrategyRegistry::Register(StrategyInfo info) {
  Registry& r = GetRegistry();
  absl::MutexLock lock(&r.mu);
  CHECK(r.by_name.count(info.name) == 0)
      << "strategy '" << info.name << "' registered twice";
  CHECK(info.oracle_tolerance > 0)
      << "strategy '" << info.name << "' declares oracle tolerance "
      << info.oracle_tolerance << " (must be > 0)";
  CHECK(info.factory != nullptr)
      << "strategy '" << info.name << "' registered without a factory";
  if (info.display_name.empty()) info.display_name = info.name;
  std::string name = info.name;
  r.by_name.emplace(std::move(name), std::move(info));
  return true;
}

absl::StatusOr<StrategyInfo> StrategyRegistry::Find(const std::string& name) {
  Registry& r = GetRegistry();
  {
    absl::MutexLock lock(&r.mu);
    auto it = r.by_name.find(name);
    if (it != r.by_name.end()) return it->second;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown strategy '", name, "' (registered: ", Names(), ")"));
}

absl::StatusOr<std::unique_ptr<SyncStrategy>> StrategyRegistry::Create(
    const std::string& name) {
  absl::StatusOr<StrategyInfo> info = Find(name);
  if (!info.ok()) return info.status();
  return info->factory();
}

std::vector<StrategyInfo> StrategyRegistry::List() {
  Registry& r = GetRegistry();
  std::vector<StrategyInfo> out;
  {
    absl::MutexLock lock(&r.mu);
    for (const auto& [name, info] : r.by_name) out.push_back(info);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const StrategyInfo& a, const StrategyInfo& b) {
                     return a.study_order < b.study_order;
                   });
  return out;
}

std::string StrategyRegistry::Names() {
  std::vector<std::string> names;
  for (const StrategyInfo& info : List()) names.push_back(info.name);
  return absl::StrJoin(names, "|");
}

}  // namespace ringside

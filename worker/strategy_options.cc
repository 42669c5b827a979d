#include "worker/strategy_options.h"

#include <algorithm>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ringside {

std::vector<std::string> StrategySpecificFlags(
    const std::vector<StrategyInfo>& registered) {
  std::vector<std::string> flags;
  for (const StrategyInfo& info : registered) {
    flags.insert(flags.end(), info.options.begin(), info.options.end());
  }
  std::sort(flags.begin(), flags.end());
  flags.erase(std::unique(flags.begin(), flags.end()), flags.end());
  return flags;
}

absl::Status CheckStrategyOptions(const StrategyInfo& chosen,
                                  const std::vector<StrategyInfo>& registered,
                                  const FlagLookup& lookup) {
  for (const std::string& study_flag : chosen.study_flags) {
    const std::string flag =
        absl::StartsWith(study_flag, "--")
            ? study_flag.substr(2, study_flag.find('=') - 2)
            : "";
    if (flag.empty() || study_flag.find('=') == std::string::npos ||
        !chosen.Reads(flag)) {
      return absl::InternalError(absl::StrCat(
          "strategy ", chosen.name, " lists study flag '", study_flag,
          "', which is not --flag=value for one of its options"));
    }
  }
  for (const std::string& flag : chosen.variant_options) {
    if (!chosen.Reads(flag)) {
      return absl::InternalError(absl::StrCat(
          "strategy ", chosen.name, " says its variant states '", flag,
          "', which is not one of its options"));
    }
  }
  for (const std::string& flag : StrategySpecificFlags(registered)) {
    const std::optional<FlagValues> values = lookup(flag);
    if (!values.has_value()) {
      std::vector<std::string> listing;
      for (const StrategyInfo& info : registered) {
        if (info.Reads(flag)) listing.push_back(info.name);
      }
      return absl::InternalError(absl::StrCat(
          "strategy ", absl::StrJoin(listing, ", "), " lists option --", flag,
          ", which is no flag of this binary"));
    }
    if (chosen.Reads(flag) || values->current == values->default_value) {
      continue;
    }
    std::vector<std::string> readers;
    for (const StrategyInfo& info : registered) {
      if (info.Reads(flag)) readers.push_back(info.name);
    }
    std::sort(readers.begin(), readers.end());  // whatever the link order
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag, "=", values->current, " is not read by strategy '",
        chosen.name, "' (only by ", absl::StrJoin(readers, ", "),
        "); leave it at its default (", values->default_value,
        ") or pick one of those strategies"));
  }
  return absl::OkStatus();
}

nlohmann::json StrategyOptionValues(const StrategyInfo& chosen,
                                    const FlagLookup& lookup) {
  nlohmann::json values = nlohmann::json::object();
  for (const std::string& flag : chosen.options) {
    if (std::optional<FlagValues> v = lookup(flag)) values[flag] = v->current;
  }
  return values;
}

FlagLookup AbslFlagLookup() {
  return [](const std::string& flag) -> std::optional<FlagValues> {
    const absl::CommandLineFlag* f = absl::FindCommandLineFlag(flag);
    if (f == nullptr) return std::nullopt;
    return FlagValues{f->CurrentValue(), f->DefaultValue()};
  };
}

}  // namespace ringside

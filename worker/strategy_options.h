// Strategy-specific worker flags: which flags belong to some strategy (the
// union of every registered StrategyInfo::options), and the refusal of one
// set for a strategy that does not read it, so that no flag is silently
// ignored (e.g. --checkpoint_every with hierarchical, --staleness with sps).
#ifndef RINGSIDE_WORKER_STRATEGY_OPTIONS_H_
#define RINGSIDE_WORKER_STRATEGY_OPTIONS_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"
#include "worker/sync_strategy.h"

namespace ringside {

// A flag's current and default value as text; nullopt for no such flag.
struct FlagValues {
  std::string current;
  std::string default_value;
};
using FlagLookup =
    std::function<std::optional<FlagValues>(const std::string& flag)>;

// The flags some strategy in `registered` lists, sorted, each once.
std::vector<std::string> StrategySpecificFlags(
    const std::vector<StrategyInfo>& registered);

// INVALID_ARGUMENT naming the first strategy-specific flag of `registered`
// that is set away from its default but not read by `chosen`, and which
// strategies read it; INTERNAL when a strategy lists a flag `lookup` does
// not know, or `chosen`'s study flags or variant options name a flag it
// does not read (a registration typo). OK otherwise.
absl::Status CheckStrategyOptions(const StrategyInfo& chosen,
                                  const std::vector<StrategyInfo>& registered,
                                  const FlagLookup& lookup);

// The final record's strategy_options: each flag `chosen` lists (its
// StrategyInfo::options) that `lookup` knows, with its current value as
// text, so that the cost model reads the run's own settings.
nlohmann::json StrategyOptionValues(const StrategyInfo& chosen,
                                    const FlagLookup& lookup);

// FlagLookup over this binary's absl flags.
FlagLookup AbslFlagLookup();

}  // namespace ringside

#endif  // RINGSIDE_WORKER_STRATEGY_OPTIONS_H_

#include "worker/strategy_option_set.h"

#include <utility>
#include <vector>

namespace ringside {
namespace {

std::vector<OptionFlagsReader>& Readers() {
  static auto* readers = new std::vector<OptionFlagsReader>();
  return *readers;
}

}  // namespace

absl::Status StrategyOptionSet::Validate() const {
  for (const auto& [type, entry] : entries_) {
    if (!entry.validate) continue;
    if (absl::Status status = entry.validate(); !status.ok()) return status;
  }
  return absl::OkStatus();
}

bool RegisterOptionFlagsReader(OptionFlagsReader reader) {
  Readers().push_back(std::move(reader));
  return true;
}

absl::Status ReadOptionFlags(StrategyOptionSet& set) {
  for (const OptionFlagsReader& reader : Readers()) {
    if (absl::Status status = reader(set); !status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace ringside

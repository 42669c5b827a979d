// The built-in strategies' registry entries that reports use (row name,
// cost-model formula, wire bytes), as `worker --list_strategies` gives
// them, for tests that build ReportRows by hand; registry_listing_test
// checks them against the worker's registry, so they cannot drift.
#ifndef RINGSIDE_TESTS_EXPERIMENTS_NAMED_ROWS_H_
#define RINGSIDE_TESTS_EXPERIMENTS_NAMED_ROWS_H_

#include <map>
#include <string>

#include "experiments/report/report.h"

namespace ringside {
namespace testing {

struct RowNaming {
  std::string display_name;
  std::string modelled_as;
  double wire_bytes_per_model_byte = 1.0;
};

inline const std::map<std::string, RowNaming>& BuiltInRowNaming() {
  static const auto* naming = new std::map<std::string, RowNaming>{
      {"baseline", {"Baseline", "baseline"}},
      {"sps", {"SPS", "sps"}},
      {"dps", {"DPS", "dps"}},
      {"byteps", {"BytePS", "byteps"}},
      {"ring", {"Ring", "ring"}},
      {"fusion", {"Fusion", "fusion"}},
      {"async_ps", {"Async PS", "async_ps"}},
      {"hierarchical", {"Hierarchical", "hierarchical"}},
      {"ring_fp16", {"Ring FP16", "ring_fp16", 1.0}},
      {"ring_bf16", {"Ring BF16", "ring_fp16", 1.0}},
      {"ring_powersgd", {"Ring PowerSGD", "ring_powersgd"}},
      {"ring_topk", {"Ring Top-k", "ring_topk"}},
      {"ring_sign", {"Ring Sign", "ring_sign"}},
      {"ring_onebit_adam", {"Ring 1-bit Adam", "ring_onebit_adam"}},
      {"local_sgd", {"Local SGD", "local_sgd"}},
      {"diloco", {"DiLoCo", "diloco"}},
      {"zero1", {"ZeRO-1", "zero1"}},
      {"zero2", {"ZeRO-2", "zero2"}},
      {"zero3", {"ZeRO-3", "zero3"}},
  };
  return *naming;
}

// A row of `strategy` named as compare names it (DisplayName's fallback
// for names not built in).
inline ReportRow NamedRow(const std::string& strategy) {
  ReportRow row;
  row.strategy = strategy;
  auto it = BuiltInRowNaming().find(strategy);
  if (it == BuiltInRowNaming().end()) {
    row.display_name = DisplayName(strategy);
    return row;
  }
  row.display_name = it->second.display_name;
  row.modelled_as = it->second.modelled_as;
  row.wire_bytes_per_model_byte = it->second.wire_bytes_per_model_byte;
  return row;
}

}  // namespace testing
}  // namespace ringside

#endif  // RINGSIDE_TESTS_EXPERIMENTS_NAMED_ROWS_H_

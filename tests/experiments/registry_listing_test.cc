// What reports take from the registry (row name, cost-model formula, wire
// bytes) agrees with the named_rows fixture that report tests build rows
// with, and every registered strategy has a row name and a distinct study
// position.
#include <set>

#include "gtest/gtest.h"
#include "tests/experiments/named_rows.h"
#include "worker/sync_strategy.h"

namespace ringside {
namespace {

TEST(RegistryListingTest, FixtureMatchesTheRegistry) {
  std::set<std::string> registered;
  for (const StrategyInfo& info : StrategyRegistry::List()) {
    registered.insert(info.name);
    auto it = testing::BuiltInRowNaming().find(info.name);
    ASSERT_NE(it, testing::BuiltInRowNaming().end()) << info.name;
    EXPECT_EQ(info.display_name, it->second.display_name) << info.name;
    EXPECT_EQ(info.modelled_as, it->second.modelled_as) << info.name;
    EXPECT_EQ(info.wire_bytes_per_model_byte,
              it->second.wire_bytes_per_model_byte)
        << info.name;
  }
  EXPECT_EQ(registered.size(), testing::BuiltInRowNaming().size());
}

TEST(RegistryListingTest, StudyOrderStartsWithTheBaselineAndIsDistinct) {
  const std::vector<StrategyInfo> listed = StrategyRegistry::List();
  ASSERT_FALSE(listed.empty());
  EXPECT_EQ(listed[0].name, "baseline");
  std::set<int> orders;
  for (const StrategyInfo& info : listed) {
    EXPECT_TRUE(orders.insert(info.study_order).second) << info.name;
    EXPECT_FALSE(info.display_name.empty()) << info.name;
  }
}

}  // namespace
}  // namespace ringside

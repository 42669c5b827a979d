// StrategyOptionSet carries each options struct by type: Get returns what
// was Set or the struct's defaults, Validate runs each stored struct's own
// check, and ValidatedFromFlags names the flags at fault.
#include "worker/strategy_option_set.h"

#include <string>

#include "gtest/gtest.h"

namespace ringside {
namespace {

struct CountOptions {
  int count = 3;
  absl::Status Validate() const {
    return count >= 0 ? absl::OkStatus()
                      : absl::InvalidArgumentError("count must be >= 0");
  }
};

struct NameOptions {  // no Validate: nothing to check
  std::string name = "default";
};

TEST(StrategyOptionSetTest, GetReturnsWhatWasSetOrTheDefaults) {
  StrategyOptionSet set;
  EXPECT_FALSE(set.Has<CountOptions>());
  EXPECT_EQ(set.Get<CountOptions>().count, 3);
  set.Set(CountOptions{7});
  set.Set(NameOptions{"mine"});
  EXPECT_TRUE(set.Has<CountOptions>());
  EXPECT_EQ(set.Get<CountOptions>().count, 7);
  EXPECT_EQ(set.Get<NameOptions>().name, "mine");
  set.Set(CountOptions{9});  // replaces
  EXPECT_EQ(set.Get<CountOptions>().count, 9);
  const StrategyOptionSet copy = set;
  EXPECT_EQ(copy.Get<CountOptions>().count, 9);
}

TEST(StrategyOptionSetTest, ValidateRunsEachStoredStructsCheck) {
  StrategyOptionSet set;
  set.Set(NameOptions{""});
  EXPECT_TRUE(set.Validate().ok());
  set.Set(CountOptions{-1});
  const absl::Status status = set.Validate();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "count must be >= 0");
}

TEST(StrategyOptionSetTest, ValidatedFromFlagsNamesTheFlags) {
  EXPECT_EQ(ValidatedFromFlags(CountOptions{2}, "--count")->count, 2);
  const absl::StatusOr<CountOptions> bad =
      ValidatedFromFlags(CountOptions{-4}, "--count");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "--count: count must be >= 0");
}

}  // namespace
}  // namespace ringside

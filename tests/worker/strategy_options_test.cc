// CheckStrategyOptions refuses a strategy-specific flag set for a strategy
// that does not read it, naming the flag, its value and its readers; lets
// defaults and read flags pass; and reports a registration that lists a
// flag the binary lacks.
#include "worker/strategy_options.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace ringside {
namespace {

std::vector<StrategyInfo> Registered() {
  return {StrategyInfo("sps", ServerNeed::kOne)
              .Options({"chunk_kb", "checkpoint_every"}),
          StrategyInfo("async_ps", ServerNeed::kSharded)
              .Options({"staleness", "chunk_kb"}),
          StrategyInfo("hierarchical", ServerNeed::kNone)};
}

FlagLookup Flags(std::map<std::string, FlagValues> flags) {
  return [flags](const std::string& name) -> std::optional<FlagValues> {
    auto it = flags.find(name);
    if (it == flags.end()) return std::nullopt;
    return it->second;
  };
}

TEST(StrategyOptionsTest, UnionOfTheListedFlags) {
  const std::vector<std::string> want = {"checkpoint_every", "chunk_kb",
                                         "staleness"};
  EXPECT_EQ(StrategySpecificFlags(Registered()), want);
}

TEST(StrategyOptionsTest, RecordedValuesAreTheChosenStrategysFlags) {
  const auto registered = Registered();
  const FlagLookup lookup = Flags({{"chunk_kb", {"512", "0"}},
                                   {"checkpoint_every", {"0", "0"}},
                                   {"staleness", {"2", "0"}}});
  const nlohmann::json want = {{"staleness", "2"}, {"chunk_kb", "512"}};
  EXPECT_EQ(StrategyOptionValues(registered[1], lookup), want);
  EXPECT_EQ(StrategyOptionValues(registered[2], lookup),
            nlohmann::json::object());
}

TEST(StrategyOptionsTest, DefaultsAndReadFlagsPass) {
  const auto registered = Registered();
  const FlagLookup lookup = Flags({{"chunk_kb", {"512", "0"}},
                                   {"checkpoint_every", {"0", "0"}},
                                   {"staleness", {"0", "0"}}});
  EXPECT_TRUE(CheckStrategyOptions(registered[0], registered, lookup).ok());
  EXPECT_TRUE(CheckStrategyOptions(registered[1], registered, lookup).ok());
}

TEST(StrategyOptionsTest, AFlagTheStrategyIgnoresIsRefused) {
  const auto registered = Registered();
  const FlagLookup lookup = Flags({{"chunk_kb", {"0", "0"}},
                                   {"checkpoint_every", {"10", "0"}},
                                   {"staleness", {"0", "0"}}});
  const absl::Status s =
      CheckStrategyOptions(registered[2], registered, lookup);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "--checkpoint_every=10 is not read by strategy 'hierarchical' (only "
            "by sps); leave it at its default (0) or pick one of those "
            "strategies");
  EXPECT_TRUE(CheckStrategyOptions(registered[0], registered, lookup).ok());
}

TEST(StrategyOptionsTest, AListedFlagTheBinaryLacksIsAnInternalError) {
  const auto registered = Registered();
  const absl::Status s = CheckStrategyOptions(
      registered[0], registered, Flags({{"chunk_kb", {"0", "0"}}}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_NE(s.message().find("lists option --checkpoint_every"),
            std::string::npos)
      << s;
}

// Every option of Registered() at its default.
FlagLookup RegisteredFlagsAtDefaults() {
  return Flags({{"chunk_kb", {"0", "0"}},
                {"checkpoint_every", {"0", "0"}},
                {"staleness", {"0", "0"}}});
}

TEST(StrategyOptionsTest, StudyFlagsMustSetOneOfTheStrategysOptions) {
  const auto registered = Registered();
  const FlagLookup lookup = RegisteredFlagsAtDefaults();
  StrategyInfo good = registered[1];
  good.StudyFlags({"--staleness=2"});
  EXPECT_TRUE(CheckStrategyOptions(good, registered, lookup).ok());
  for (const char* bad : {"--checkpoint_every=5", "--staleness", "staleness=2",
                          "--=2"}) {
    StrategyInfo info = registered[1];
    info.StudyFlags({bad});
    const absl::Status s = CheckStrategyOptions(info, registered, lookup);
    EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << bad;
    EXPECT_NE(s.message().find(absl::StrCat("study flag '", bad, "'")),
              std::string::npos)
        << s;
  }
}

TEST(StrategyOptionsTest, VariantOptionsMustBeOptionsOfTheStrategy) {
  const auto registered = Registered();
  const FlagLookup lookup = RegisteredFlagsAtDefaults();
  StrategyInfo good = registered[1];
  good.VariantStates({"staleness"});
  EXPECT_TRUE(CheckStrategyOptions(good, registered, lookup).ok());
  StrategyInfo bad = registered[1];
  bad.VariantStates({"checkpoint_every"});
  const absl::Status s = CheckStrategyOptions(bad, registered, lookup);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_NE(s.message().find("variant states 'checkpoint_every'"),
            std::string::npos)
      << s;
}

}  // namespace
}  // namespace ringside

// A deprecated flag name sets its new flag; both given is refused; a value
// that does not parse as the new flag's type is refused naming both.
#include "common/flag_aliases.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"

ABSL_FLAG(double, alias_test_link_gbit, 25, "the new name");
RINGSIDE_FLAG_ALIAS(alias_test_bandwidth_gbps, alias_test_link_gbit);

namespace ringside {
namespace {

void Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "test");
  absl::ParseCommandLine(static_cast<int>(args.size()),
                         const_cast<char**>(args.data()));
}

TEST(FlagAliasesTest, OldNameSetsTheNewFlag) {
  absl::FlagSaver saver;
  Parse({"--alias_test_bandwidth_gbps=0.5"});
  ASSERT_TRUE(ApplyFlagAliases().ok());
  EXPECT_EQ(absl::GetFlag(FLAGS_alias_test_link_gbit), 0.5);
}

TEST(FlagAliasesTest, NeitherGivenKeepsTheDefault) {
  absl::FlagSaver saver;
  ASSERT_TRUE(ApplyFlagAliases().ok());
  EXPECT_EQ(absl::GetFlag(FLAGS_alias_test_link_gbit), 25);
}

TEST(FlagAliasesTest, BothGivenIsRefused) {
  absl::FlagSaver saver;
  Parse({"--alias_test_bandwidth_gbps=0.5", "--alias_test_link_gbit=1"});
  EXPECT_EQ(ApplyFlagAliases().code(), absl::StatusCode::kInvalidArgument);
}

TEST(FlagAliasesTest, BadValueIsRefusedNamingBoth) {
  absl::FlagSaver saver;
  Parse({"--alias_test_bandwidth_gbps=fast"});
  const absl::Status s = ApplyFlagAliases();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("--alias_test_bandwidth_gbps=fast"),
            std::string::npos)
      << s;
  EXPECT_NE(s.message().find("--alias_test_link_gbit"), std::string::npos)
      << s;
}

}  // namespace
}  // namespace ringside

// Output paths: folders are made as mkdir -p would, and a path whose folder
// is missing or unwritable is refused naming the flag.
#include "common/output_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringside {
namespace {

using ::testing::HasSubstr;

std::string Tmp() { return std::getenv("TEST_TMPDIR"); }

TEST(OutputPathTest, MakesNestedFoldersAndLeavesNoProbe) {
  const std::string dir = Tmp() + "/a/b/c";
  ASSERT_TRUE(PrepareOutputDir(dir, "checkpoint_dir").ok());
  EXPECT_TRUE(std::filesystem::is_directory(dir));
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  EXPECT_TRUE(CheckOutputFile(dir + "/params.bin", "save_params").ok());
  EXPECT_FALSE(std::filesystem::exists(dir + "/params.bin"));
}

TEST(OutputPathTest, RefusesMissingOrUnwritableFolders) {
  absl::Status s = CheckOutputFile(Tmp() + "/missing/p.bin", "save_params");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("--save_params=" + Tmp() + "/missing/p.bin"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("does not exist"));

  s = PrepareOutputDir("/proc/ringside-cannot-be-made", "checkpoint_dir");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("--checkpoint_dir="));

  if (geteuid() != 0) {  // root writes anywhere
    const std::string ro = Tmp() + "/read_only";
    ASSERT_TRUE(PrepareOutputDir(ro, "x").ok());
    chmod(ro.c_str(), 0500);
    s = PrepareOutputDir(ro, "checkpoint_dir");
    EXPECT_THAT(std::string(s.message()), HasSubstr("cannot create files"));
    chmod(ro.c_str(), 0700);
  }
}

}  // namespace
}  // namespace ringside

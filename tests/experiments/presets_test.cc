#include "experiments/presets.h"

#include <errno.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

ABSL_FLAG(int, preset_test_steps, 1, "Set by the test preset.");
ABSL_FLAG(std::string, preset_test_model, "none", "Set by the test preset.");
ABSL_FLAG(std::string, preset, "", "As in compare.");

namespace ringside {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string TmpDir(const std::string& name) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  std::filesystem::create_directories(dir);
  return dir;
}

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

TEST(PresetsTest, ShippedPresetsAreFoundInTheRunfiles) {
  const std::vector<std::string> dirs = PresetDirs(program_invocation_name, "");
  ASSERT_FALSE(dirs.empty());
  const std::vector<std::string> names = ListPresets(dirs);
  for (const char* want :
       {"study4", "comm_bound", "compute_bound", "slow_link", "study_gpt2"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
    absl::StatusOr<std::string> path = FindPreset(want, dirs);
    ASSERT_TRUE(path.ok()) << path.status();
    EXPECT_TRUE(std::filesystem::is_regular_file(*path)) << *path;
  }
}

TEST(PresetsTest, UnknownPresetListsTheKnownOnes) {
  const std::string dir = TmpDir("unknown");
  Write(dir + "/b.flags", "--x=1\n");
  Write(dir + "/a.flags", "--x=2\n");
  Write(dir + "/notes.txt", "not a preset\n");
  EXPECT_THAT(ListPresets({dir}), ElementsAre("a", "b"));
  absl::StatusOr<std::string> path = FindPreset("c", {dir});
  EXPECT_EQ(path.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(path.status().message()),
              HasSubstr("unknown preset 'c'; known: a, b"));
  EXPECT_EQ(FindPreset("../a", {dir}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(*FindPreset("a", {dir}), dir + "/a.flags");
}

TEST(PresetsTest, PresetDirFlagWins) {
  EXPECT_THAT(PresetDirs(program_invocation_name, "/some/dir"),
              ElementsAre("/some/dir"));
}

TEST(PresetsTest, FlagValue) {
  const std::vector<std::string> args = {
      "compare", "--preset=a", "--x=1", "--preset", "b", "--", "--preset=c"};
  EXPECT_EQ(FlagValue(args, "preset"), "b");
  EXPECT_EQ(FlagValue(args, "x"), "1");
  EXPECT_FALSE(FlagValue(args, "y").has_value());
  EXPECT_FALSE(FlagValue({"compare", "--", "--preset=c"}, "preset"));
}

TEST(PresetsTest, ExpandPutsThePresetFirst) {
  const std::string dir = TmpDir("expand");
  Write(dir + "/p.flags", "--x=1\n");
  const std::vector<std::string> args = {"compare", "--steps=3", "--preset=p"};
  absl::StatusOr<std::vector<std::string>> out = ExpandPreset(args, {dir});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, ElementsAre("compare", "--flagfile=" + dir + "/p.flags",
                                "--steps=3", "--preset=p"));
  EXPECT_EQ(*ExpandPreset({"compare", "--steps=3"}, {dir}),
            (std::vector<std::string>{"compare", "--steps=3"}));
  EXPECT_FALSE(ExpandPreset({"compare", "--preset=q"}, {dir}).ok());
}

TEST(PresetsTest, ExplicitFlagsOverrideThePreset) {
  const std::string dir = TmpDir("override");
  Write(dir + "/p.flags",
        "# a comment line\n--preset_test_steps=40\n"
        "--preset_test_model=synthetic\n");
  absl::StatusOr<std::vector<std::string>> args =
      ExpandPreset({"compare", "--preset_test_steps=80", "--preset=p"}, {dir});
  ASSERT_TRUE(args.ok()) << args.status();
  std::vector<char*> argv;
  for (std::string& a : *args) argv.push_back(a.data());
  absl::ParseCommandLine(static_cast<int>(argv.size()), argv.data());
  EXPECT_EQ(absl::GetFlag(FLAGS_preset_test_steps), 80);  // explicit wins
  EXPECT_EQ(absl::GetFlag(FLAGS_preset_test_model), "synthetic");  // preset
  EXPECT_EQ(absl::GetFlag(FLAGS_preset), "p");
}

}  // namespace
}  // namespace ringside

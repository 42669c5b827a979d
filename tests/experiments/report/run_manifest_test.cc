// The run manifest: its parsers on made-up /proc and /etc text, its line
// and JSON, and a probe of this machine that names every field.
#include "experiments/report/run_manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ringside {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(RunManifestTest, MeanCpuMhzAveragesEveryCore) {
  EXPECT_DOUBLE_EQ(MeanCpuMhz("processor\t: 0\ncpu MHz\t\t: 2000.000\n"
                              "processor\t: 1\ncpu MHz\t\t: 3000.500\n"),
                   2500.25);
  EXPECT_EQ(MeanCpuMhz("processor\t: 0\n"), 0);
}

TEST(RunManifestTest, PrettyOsNameIsUnquoted) {
  EXPECT_EQ(PrettyOsName("NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian "
                         "GNU/Linux 12 (bookworm)\"\nID=debian\n"),
            "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(PrettyOsName("ID=debian\n"), "unknown");
}

TEST(RunManifestTest, LineAndJsonCarryEveryField) {
  RunManifest m;
  m.commit = "abc1234+changes";
  m.command = "compare --workers=2";
  m.kernel = "Linux 6.1.0 x86_64";
  m.os = "Debian GNU/Linux 12 (bookworm)";
  m.governor = "performance";
  m.cpu_mhz = 2450.4;
  m.libraries = {{"libgloo-dev", "0.0~git20230519-1"},
                 {"libgrpc++-dev", "unknown"}};
  EXPECT_EQ(RunManifestLine(m),
            "commit abc1234+changes; Linux 6.1.0 x86_64, Debian GNU/Linux 12 "
            "(bookworm); CPU governor performance, 2450 MHz; libgloo-dev "
            "0.0~git20230519-1, libgrpc++-dev unknown");
  const nlohmann::json j = RunManifestJson(m);
  EXPECT_EQ(j["commit"], "abc1234+changes");
  EXPECT_EQ(j["command"], "compare --workers=2");
  EXPECT_EQ(j["cpu_governor"], "performance");
  EXPECT_DOUBLE_EQ(j["cpu_mhz"].get<double>(), 2450.4);
  EXPECT_EQ(j["libraries"]["libgloo-dev"], "0.0~git20230519-1");
  EXPECT_EQ(j["summary"], RunManifestLine(m));
  m.cpu_mhz = 0;
  EXPECT_TRUE(RunManifestJson(m)["cpu_mhz"].is_null());
  EXPECT_THAT(RunManifestLine(m), Not(HasSubstr("MHz")));
}

// This machine: every field is filled (or says it is unknown), and the
// five libraries are named.
TEST(RunManifestTest, ProbeFillsEveryField) {
  const RunManifest m = ProbeRunManifest({"compare", "--workers=2"});
  EXPECT_EQ(m.command, "compare --workers=2");
  EXPECT_FALSE(m.commit.empty());
  EXPECT_THAT(m.kernel, HasSubstr("Linux"));
  EXPECT_FALSE(m.os.empty());
  EXPECT_FALSE(m.governor.empty());
  ASSERT_EQ(m.libraries.size(), 5u);
  EXPECT_EQ(m.libraries[0].first, "libgloo-dev");
  for (const auto& [package, version] : m.libraries) {
    EXPECT_FALSE(version.empty()) << package;
  }
}

}  // namespace
}  // namespace ringside

// The built-in link tables: every file parses, says its link type, its
// source and its nominal rate and holds an all-reduce run; a type finds
// its default (the first file of the type), a name its own file, and an
// unknown name is refused listing the known ones.
#include "experiments/cost/builtin_link_tables.h"

#include <filesystem>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringside {
namespace {

using ::testing::HasSubstr;

const std::set<std::string>& LinkTypes() {
  static const auto* types = new std::set<std::string>{
      "nvlink", "nvswitch", "pcie", "infiniband", "roce", "tcp"};
  return *types;
}

TEST(BuiltinLinkTablesTest, EveryFileParsesWithItsSourceAndRate) {
  ASSERT_FALSE(BuiltinLinkFiles().empty());
  for (const BuiltinLinkFile& f : BuiltinLinkFiles()) {
    absl::StatusOr<MeasuredCollectives> m =
        MeasuredCollectives::Parse(f.text, f.path);
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ(LinkTypes().count(m->link()), 1u) << f.path << ": " << m->link();
    EXPECT_FALSE(m->sources().empty()) << f.path;
    EXPECT_GT(m->nominal_gbit(), 0) << f.path;
    EXPECT_TRUE(m->Has(CollectiveOp::kAllReduce)) << f.path;
    for (const CollectiveRun& r : m->runs()) {
      EXPECT_GE(r.points.size(), 4u) << r.where;
    }
  }
}

TEST(BuiltinLinkTablesTest, ATypeFindsItsFirstFileAndANameItsOwn) {
  std::set<std::string> seen;
  for (const BuiltinLinkFile& f : BuiltinLinkFiles()) {
    const std::string stem = std::filesystem::path(f.path).stem().string();
    const MeasuredCollectives m = *MeasuredCollectives::Parse(f.text, f.path);
    std::string table;
    ASSERT_TRUE(FindBuiltinLinkTable(stem, &table).ok()) << stem;
    EXPECT_EQ(table, stem);
    ASSERT_TRUE(FindBuiltinLinkTable(m.link(), &table).ok());
    if (seen.insert(m.link()).second) {
      EXPECT_EQ(table, stem) << "the first file of " << m.link();
    } else {
      EXPECT_NE(table, stem) << "not the first file of " << m.link();
    }
  }
  const absl::Status s = FindBuiltinLinkTable("carrier_pigeon", nullptr).status();
  EXPECT_TRUE(absl::IsNotFound(s));
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("'carrier_pigeon' is neither a built-in link table"));
  EXPECT_THAT(std::string(s.message()), HasSubstr(*seen.begin()));
}

}  // namespace
}  // namespace ringside

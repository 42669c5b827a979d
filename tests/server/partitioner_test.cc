// Partitioner: every element owned exactly once, balanced, stable; chunking.
#include "server/partitioner.h"

#include <gtest/gtest.h>

namespace ringside {
namespace {

TensorLayout Layout(std::vector<int64_t> sizes) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
  for (size_t i = 0; i < sizes.size(); ++i) {
    shapes.push_back({"t" + std::to_string(i), {sizes[i]}});
  }
  return *TensorLayout::FromShapes(shapes);
}

class EvenBytesTest
    : public ::testing::TestWithParam<std::tuple<std::vector<int64_t>, int>> {};

TEST_P(EvenBytesTest, OwnsEveryElementOnceAndBalances) {
  const auto& [sizes, k] = GetParam();
  const TensorLayout layout = Layout(sizes);
  auto p = MakeEvenBytesPartitioner();
  absl::StatusOr<std::vector<KeyRange>> ranges = p->Partition(layout, k);
  ASSERT_TRUE(ranges.ok());
  ASSERT_EQ(ranges->size(), k);
  std::vector<int> owners(layout.total_elements(), 0);
  int64_t smallest = INT64_MAX, largest = 0;
  for (const KeyRange& r : *ranges) {
    for (int64_t i = r.begin; i < r.end; ++i) ++owners[i];
    smallest = std::min(smallest, r.size());
    largest = std::max(largest, r.size());
  }
  for (int64_t i = 0; i < layout.total_elements(); ++i) {
    ASSERT_EQ(owners[i], 1) << "element " << i;
  }
  EXPECT_LE(largest - smallest, 1);  // well within one chunk
  // Stable: the same inputs give the same ranges.
  EXPECT_EQ(*p->Partition(layout, k), *ranges);
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, EvenBytesTest,
    ::testing::Combine(::testing::Values(std::vector<int64_t>{10},
                                         std::vector<int64_t>{1000, 7, 3},
                                         std::vector<int64_t>{1, 1, 1, 1, 1},
                                         std::vector<int64_t>{4096, 8192, 10}),
                       ::testing::Values(1, 2, 3, 4, 7)));

TEST(PartitionerTest, SplitsALargeTensorAcrossServers) {
  auto ranges = MakeEvenBytesPartitioner()->Partition(Layout({100, 2}), 2);
  ASSERT_TRUE(ranges.ok());
  EXPECT_EQ((*ranges)[0], (KeyRange{0, 51}));
  EXPECT_EQ((*ranges)[1], (KeyRange{51, 102}));
}

TEST(PartitionerTest, RejectsBadInput) {
  EXPECT_FALSE(MakeEvenBytesPartitioner()->Partition(Layout({4}), 0).ok());
  absl::StatusOr<std::unique_ptr<Partitioner>> p = MakePartitioner("hash");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("known: even_bytes"), std::string::npos);
}

TEST(ChunkRangeTest, CutsIntoChunksWithAShortLastOne) {
  std::vector<KeyRange> chunks = ChunkRange({10, 25}, 6);
  ASSERT_EQ(chunks.size(), 3);
  EXPECT_EQ(chunks[0], (KeyRange{10, 16}));
  EXPECT_EQ(chunks[2], (KeyRange{22, 25}));
  EXPECT_TRUE(ChunkRange({5, 5}, 4).empty());
}

}  // namespace
}  // namespace ringside

// Coordinator (rank 0's message table) and ResponseCache: readiness across
// ranks, bad requests rejected with the table unchanged, stall reports that
// name the missing ranks once per period, cache bits and capacity.
#include "collectives/fusion/coordinator.h"

#include <gtest/gtest.h>

#include "collectives/fusion/response_cache.h"

namespace ringside {
namespace {

TensorLayout Layout() {
  return *TensorLayout::FromShapes({{"a", {10}}, {"b", {20}}, {"c", {30}}});
}

proto::RequestList Requests(const std::vector<int>& tensors,
                            const TensorLayout& layout) {
  proto::RequestList list;
  for (int t : tensors) {
    proto::TensorRequest* r = list.add_requests();
    r->set_index(t);
    r->set_elements(layout.tensor(t).size);
  }
  return list;
}

TEST(CoordinatorTest, ReadyWhenEveryRankHasRequestedInCompletionOrder) {
  const TensorLayout layout = Layout();
  Coordinator c(3, &layout);
  ASSERT_TRUE(c.Add(0, Requests({2, 0, 1}, layout), 0.0).ok());
  ASSERT_TRUE(c.Add(1, Requests({1, 2}, layout), 0.0).ok());
  EXPECT_TRUE(c.TakeReady().empty());
  ASSERT_TRUE(c.Add(2, Requests({1, 2}, layout), 0.0).ok());
  EXPECT_EQ(c.TakeReady(), (std::vector<int>{1, 2}));
  EXPECT_EQ(c.pending(), 1);
  ASSERT_TRUE(c.Add(1, Requests({0}, layout), 0.0).ok());
  ASSERT_TRUE(c.Add(2, Requests({0}, layout), 0.0).ok());
  EXPECT_EQ(c.TakeReady(), (std::vector<int>{0}));
  EXPECT_EQ(c.pending(), 0);
}

TEST(CoordinatorTest, BadRequestsAreRejectedAndLeaveTheTableUnchanged) {
  const TensorLayout layout = Layout();
  Coordinator c(2, &layout);
  ASSERT_TRUE(c.Add(0, Requests({0}, layout), 0.0).ok());

  proto::RequestList wrong_size = Requests({1, 2}, layout);
  wrong_size.mutable_requests(1)->set_elements(31);
  absl::Status s = c.Add(1, wrong_size, 0.0);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'c' with 31 elements"), std::string::npos) << s;

  proto::RequestList unknown = Requests({0}, layout);
  unknown.mutable_requests(0)->set_index(7);
  s = c.Add(1, unknown, 0.0);
  EXPECT_NE(s.message().find("unknown tensor index 7"), std::string::npos)
      << s;
  s = c.Add(0, Requests({1, 0}, layout), 0.0);  // 0 again, before rank 1
  EXPECT_NE(s.message().find("again"), std::string::npos) << s;
  EXPECT_EQ(c.Add(5, Requests({0}, layout), 0.0).code(),
            absl::StatusCode::kInvalidArgument);

  // Nothing above changed the table: only tensor 0 from rank 0 is pending.
  EXPECT_EQ(c.pending(), 1);
  ASSERT_TRUE(c.Add(1, Requests({0}, layout), 0.0).ok());
  EXPECT_EQ(c.TakeReady(), (std::vector<int>{0}));
}

TEST(CoordinatorTest, StallsNameTheMissingRanksOncePerPeriod) {
  const TensorLayout layout = Layout();
  Coordinator c(4, &layout);
  ASSERT_TRUE(c.Add(0, Requests({1}, layout), 10.0).ok());
  ASSERT_TRUE(c.Add(2, Requests({1}, layout), 11.0).ok());
  EXPECT_TRUE(c.TakeStalled(14.0, 5.0).empty());  // too early
  std::vector<StallReport> stalls = c.TakeStalled(15.5, 5.0);
  ASSERT_EQ(stalls.size(), 1u);
  EXPECT_EQ(stalls[0].name, "b");
  EXPECT_EQ(stalls[0].submitted_ranks, (std::vector<int>{0, 2}));
  EXPECT_EQ(stalls[0].missing_ranks, (std::vector<int>{1, 3}));
  EXPECT_DOUBLE_EQ(stalls[0].waiting_s, 5.5);
  EXPECT_NE(stalls[0].ToString().find("not by rank(s) [1,3]"),
            std::string::npos)
      << stalls[0].ToString();
  EXPECT_TRUE(c.TakeStalled(17.0, 5.0).empty());  // reported 1.5 s ago
  EXPECT_EQ(c.TakeStalled(21.0, 5.0).size(), 1u);
}

TEST(ResponseCacheTest, BitsInInsertionOrderUpToCapacity) {
  ResponseCache cache(2);
  EXPECT_FALSE(cache.BitOf(5).has_value());
  EXPECT_TRUE(cache.Put(5));
  EXPECT_FALSE(cache.Put(5));  // already there
  EXPECT_TRUE(cache.Put(3));
  EXPECT_FALSE(cache.Put(9));  // full
  EXPECT_EQ(cache.BitOf(5), 0);
  EXPECT_EQ(cache.BitOf(3), 1);
  EXPECT_FALSE(cache.BitOf(9).has_value());
  EXPECT_EQ(cache.TensorAt(1), 3);
  EXPECT_EQ(cache.size(), 2);
}

TEST(ResponseCacheTest, CapacityZeroCachesNothing) {
  ResponseCache cache(0);
  EXPECT_FALSE(cache.Put(0));
  EXPECT_EQ(cache.size(), 0);
}

}  // namespace
}  // namespace ringside

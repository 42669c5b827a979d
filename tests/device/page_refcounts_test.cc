// PageRefcounts: holds map only the pages nobody held, drops free only the
// pages nobody holds any more, shared pages count both ranges, and a drop
// without its hold or a range outside the bytes is refused, changing
// nothing.
#include "device/page_refcounts.h"

#include <gtest/gtest.h>

#include <vector>

namespace ringside {
namespace {

using Runs = std::vector<PageRun>;

TEST(PageRefcountsTest, PagesRoundOutwardAndEmptyRangesTouchNone) {
  PageRefcounts pages(/*bytes=*/1000, /*page_bytes=*/100);
  EXPECT_EQ(pages.num_pages(), 10u);
  PageRefcounts ragged(1001, 100);
  EXPECT_EQ(ragged.num_pages(), 11u);
  // [150, 350) touches pages 1, 2 and 3.
  absl::StatusOr<Runs> fresh = pages.Hold(150, 350);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_EQ(*fresh, (Runs{{1, 3}}));
  fresh = pages.Hold(400, 400);
  ASSERT_TRUE(fresh.ok());
  EXPECT_TRUE(fresh->empty());
  EXPECT_EQ(pages.held_pages(), 3u);
}

TEST(PageRefcountsTest, SharedPagesStayUntilTheirLastHolderDrops) {
  PageRefcounts pages(1000, 100);
  // Two neighbours sharing page 2, as a rank's piece and the next unit's.
  ASSERT_TRUE(pages.Hold(0, 250).ok());
  absl::StatusOr<Runs> fresh = pages.Hold(250, 500);
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(*fresh, (Runs{{3, 2}}));  // page 2 was held already
  EXPECT_EQ(pages.count(2), 2);
  absl::StatusOr<Runs> freed = pages.Drop(250, 500);
  ASSERT_TRUE(freed.ok()) << freed.status();
  EXPECT_EQ(*freed, (Runs{{3, 2}}));  // page 2 still held by [0, 250)
  freed = pages.Drop(0, 250);
  ASSERT_TRUE(freed.ok());
  EXPECT_EQ(*freed, (Runs{{0, 3}}));
  EXPECT_EQ(pages.held_pages(), 0u);
}

TEST(PageRefcountsTest, RunsSplitWhereAPageWasAlreadyHeld) {
  PageRefcounts pages(1000, 100);
  ASSERT_TRUE(pages.Hold(500, 600).ok());
  absl::StatusOr<Runs> fresh = pages.Hold(0, 1000);
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(*fresh, (Runs{{0, 5}, {6, 4}}));
}

TEST(PageRefcountsTest, RefusesADropWithoutItsHoldAndRangesOutside) {
  PageRefcounts pages(1000, 100);
  ASSERT_TRUE(pages.Hold(0, 200).ok());
  absl::StatusOr<Runs> freed = pages.Drop(100, 300);  // page 2 not held
  EXPECT_EQ(freed.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(freed.status().message().find("page 2"), std::string::npos)
      << freed.status();
  EXPECT_EQ(pages.count(1), 1);  // nothing changed
  EXPECT_EQ(pages.Hold(900, 1001).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(pages.Hold(300, 200).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(pages.held_pages(), 2u);
}

}  // namespace
}  // namespace ringside

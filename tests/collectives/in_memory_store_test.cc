// InMemoryStore: set/get/wait/add, blocking until a key appears, timeouts
// that name the missing keys, Close waking blocked callers.
#include "collectives/in_memory_store.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace ringside {
namespace {

TEST(InMemoryStoreTest, SetGetOverwrite) {
  InMemoryStore store;
  ASSERT_TRUE(store.Set("k", std::string("a\0b", 3)).ok());
  absl::StatusOr<std::string> v = store.Get("k", absl::ZeroDuration());
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, std::string("a\0b", 3));
  ASSERT_TRUE(store.Set("k", "second").ok());
  EXPECT_EQ(*store.Get("k", absl::Seconds(1)), "second");
  EXPECT_EQ(store.size(), 1);
}

TEST(InMemoryStoreTest, GetWaitsForALaterSet) {
  InMemoryStore store;
  std::thread setter([&] {
    absl::SleepFor(absl::Milliseconds(100));
    ASSERT_TRUE(store.Set("late", "value").ok());
  });
  const absl::Time start = absl::Now();
  absl::StatusOr<std::string> v = store.Get("late", absl::Seconds(10));
  setter.join();
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, "value");
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(90));
}

TEST(InMemoryStoreTest, GetOfMissingKeyTimesOutNamingIt) {
  InMemoryStore store;
  const absl::Time start = absl::Now();
  absl::StatusOr<std::string> v =
      store.Get("rank_3_address", absl::Milliseconds(200));
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(v.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(v.status().message().find("rank_3_address"), std::string::npos)
      << v.status();
  EXPECT_GE(took, absl::Milliseconds(190));
  EXPECT_LT(took, absl::Seconds(2));
}

TEST(InMemoryStoreTest, WaitNamesOnlyTheMissingKeys) {
  InMemoryStore store;
  ASSERT_TRUE(store.Set("a", "1").ok());
  absl::Status s = store.Wait({"a", "b", "c"}, absl::Milliseconds(50));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(s.message().find("[b, c]"), std::string::npos) << s;
  ASSERT_TRUE(store.Set("b", "1").ok());
  ASSERT_TRUE(store.Set("c", "1").ok());
  EXPECT_TRUE(store.Wait({"a", "b", "c"}, absl::ZeroDuration()).ok());
}

TEST(InMemoryStoreTest, WaitReturnsWhenTheLastKeyArrives) {
  InMemoryStore store;
  std::vector<std::thread> setters;
  for (int i = 0; i < 4; ++i) {
    setters.emplace_back([&store, i] {
      absl::SleepFor(absl::Milliseconds(20 * i));
      ASSERT_TRUE(store.Set("k" + std::to_string(i), "x").ok());
    });
  }
  EXPECT_TRUE(store.Wait({"k0", "k1", "k2", "k3"}, absl::Seconds(10)).ok());
  for (std::thread& t : setters) t.join();
}

TEST(InMemoryStoreTest, AddIsAtomicAndReturnsTheNewValue) {
  InMemoryStore store;
  EXPECT_EQ(*store.Add("n", 5), 5);
  EXPECT_EQ(*store.Add("n", -2), 3);
  std::vector<std::thread> adders;
  for (int t = 0; t < 4; ++t) {
    adders.emplace_back([&store] {
      for (int i = 0; i < 250; ++i) ASSERT_TRUE(store.Add("count", 1).ok());
    });
  }
  for (std::thread& t : adders) t.join();
  EXPECT_EQ(*store.Get("count", absl::ZeroDuration()), "1000");

  ASSERT_TRUE(store.Set("text", "hello").ok());
  absl::StatusOr<int64_t> bad = store.Add("text", 1);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("text"), std::string::npos);
}

// A tests/fuzz/store_request_fuzzer case (UBSan: signed overflow).
TEST(InMemoryStoreTest, AddThatOverflowsIsRefusedAndLeavesTheValue) {
  InMemoryStore store;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  ASSERT_EQ(*store.Add("n", kMax), kMax);
  absl::StatusOr<int64_t> over = store.Add("n", 1);
  EXPECT_EQ(over.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(over.status().message().find("overflows"), std::string::npos);
  EXPECT_EQ(*store.Get("n", absl::ZeroDuration()), absl::StrCat(kMax));
  ASSERT_EQ(*store.Add("m", kMin), kMin);
  EXPECT_EQ(store.Add("m", -1).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(*store.Add("m", kMax), -1);
}

TEST(InMemoryStoreTest, CloseWakesBlockedCallers) {
  InMemoryStore store;
  std::thread closer([&] {
    absl::SleepFor(absl::Milliseconds(100));
    store.Close();
  });
  const absl::Time start = absl::Now();
  absl::StatusOr<std::string> v = store.Get("never", absl::Seconds(30));
  closer.join();
  EXPECT_EQ(v.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(store.Set("k", "v").code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace ringside

// GlooStore: Gloo's rendezvous Store interface over ours, under a prefix;
// failures throw gloo::IoException and keep the real absl::Status.
#include "collectives/gloo_store.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "collectives/in_memory_store.h"
#include "gloo/common/error.h"

namespace ringside {
namespace {

TEST(GlooStoreTest, SetGetWaitUnderThePrefix) {
  InMemoryStore store;
  GlooStore gloo_store(&store, "group1", absl::Seconds(1));
  gloo_store.set("0", {'a', '\0', 'b'});
  EXPECT_EQ(*store.Get("group1/0", absl::ZeroDuration()),
            std::string("a\0b", 3));
  EXPECT_EQ(gloo_store.get("0"), (std::vector<char>{'a', '\0', 'b'}));
  gloo_store.wait({"0"});
  gloo_store.wait({"0"}, std::chrono::milliseconds(10));
  EXPECT_TRUE(gloo_store.first_error().ok());
}

TEST(GlooStoreTest, WaitTimeoutThrowsGlooIoExceptionNamingTheKey) {
  InMemoryStore store;
  GlooStore gloo_store(&store, "g", absl::Seconds(30));
  try {
    gloo_store.wait({"3"}, std::chrono::milliseconds(50));
    FAIL() << "wait did not throw";
  } catch (const gloo::IoException& e) {
    EXPECT_NE(std::string(e.what()).find("g/3"), std::string::npos) << e.what();
  }
  EXPECT_EQ(gloo_store.first_error().code(),
            absl::StatusCode::kDeadlineExceeded);
}

TEST(GlooStoreTest, GetUsesTheAdapterTimeout) {
  InMemoryStore store;
  GlooStore gloo_store(&store, "g", absl::Milliseconds(50));
  EXPECT_THROW(gloo_store.get("rank_1"), gloo::IoException);
  EXPECT_NE(gloo_store.first_error().message().find("g/rank_1"),
            std::string::npos)
      << gloo_store.first_error();
}

}  // namespace
}  // namespace ringside

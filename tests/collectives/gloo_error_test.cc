// CallGloo: every kind of exception Gloo throws becomes a Status with the
// right code, Gloo's message and our call site.
#include "collectives/gloo_error.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "gloo/common/error.h"
#include "gloo/common/logging.h"

namespace ringside {
namespace {

TEST(GlooErrorTest, ReturnsOkWhenNothingIsThrown) {
  int ran = 0;
  EXPECT_TRUE(RS_GLOO_CALL("op", ++ran).ok());
  EXPECT_EQ(ran, 1);
}

TEST(GlooErrorTest, TimeoutIsDeadlineExceeded) {
  absl::Status s = RS_GLOO_CALL("AllReduce", {
    throw gloo::IoException("Timed out waiting 100ms for recv operation");
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(s.message().find("AllReduce"), std::string::npos) << s;
  EXPECT_NE(s.message().find("gloo_error_test.cc"), std::string::npos) << s;
  EXPECT_NE(s.message().find("Timed out waiting 100ms"), std::string::npos);
}

TEST(GlooErrorTest, OtherIoErrorsAreUnavailable) {
  absl::Status s = RS_GLOO_CALL(
      "op", { throw gloo::IoException("Connection reset by peer"); });
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("Connection reset by peer"), std::string::npos);
}

TEST(GlooErrorTest, FailedChecksAndOthersAreInternal) {
  // (GLOO_ENFORCE_EQ only compiles inside namespace gloo.)
  const int elements = 3;
  absl::Status s =
      RS_GLOO_CALL("op", { GLOO_ENFORCE(elements == 2, "sizes differ"); });
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_NE(s.message().find("EnforceNotMet"), std::string::npos) << s;
  s = RS_GLOO_CALL("op", { throw std::runtime_error("boom"); });
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_NE(s.message().find("boom"), std::string::npos);
}

}  // namespace
}  // namespace ringside

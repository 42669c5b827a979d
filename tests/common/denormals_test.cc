// Denormal floats flush to zero in every ringside process
// (common/denormals.h), its threads inherit it, and
// RINGSIDE_DENORMALS=keep leaves gradual underflow.
#include "common/denormals.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace ringside {
namespace {

// A product below FLT_MIN (1.2e-38): denormal, or 0 when flushed.
float DenormalProduct() {
  volatile float tiny = 1e-30f;
  volatile float scale = 1e-10f;
  return tiny * scale;
}

// The smallest denormal times 2^100: 2^-49 read as is, 0 read as zero.
float ScaledSmallestDenormal() {
  const uint32_t bits = 1;
  float smallest;
  std::memcpy(&smallest, &bits, sizeof(smallest));
  volatile float in = smallest;
  volatile float scale = 1.2676506e30f;  // 2^100
  return in * scale;
}

bool KeptByEnvironment() {
  const char* keep = std::getenv("RINGSIDE_DENORMALS");
  return keep != nullptr && std::strcmp(keep, "keep") == 0;
}

// As the process started: flushed, unless RINGSIDE_DENORMALS=keep (the
// case KeepLeavesGradualUnderflow runs this in a child with it).
TEST(DenormalsTest, ProcessStartsAsTheEnvironmentSays) {
  if (KeptByEnvironment()) {
    EXPECT_FALSE(DenormalsFlushedToZero());
    EXPECT_GT(DenormalProduct(), 0.0f);
    EXPECT_GT(ScaledSmallestDenormal(), 0.0f);
  } else {
    EXPECT_TRUE(DenormalsFlushedToZero());
    EXPECT_EQ(DenormalProduct(), 0.0f);        // flush-to-zero
    EXPECT_EQ(ScaledSmallestDenormal(), 0.0f);  // denormals-are-zero
  }
}

TEST(DenormalsTest, ThreadsStartedLaterInheritIt) {
  if (KeptByEnvironment()) GTEST_SKIP() << "RINGSIDE_DENORMALS=keep";
  bool flushed = false;
  float product = -1;
  std::thread t([&] {
    flushed = DenormalsFlushedToZero();
    product = DenormalProduct();
  });
  t.join();
  EXPECT_TRUE(flushed);
  EXPECT_EQ(product, 0.0f);
}

TEST(DenormalsTest, KeepLeavesGradualUnderflow) {
  if (KeptByEnvironment()) GTEST_SKIP() << "already the child";
  char self[4096];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  ASSERT_GT(length, 0);
  self[length] = '\0';
  const std::string command =
      std::string("RINGSIDE_DENORMALS=keep '") + self +
      "' --gtest_filter=DenormalsTest.ProcessStartsAsTheEnvironmentSays 2>&1";
  FILE* child = popen(command.c_str(), "r");
  ASSERT_NE(child, nullptr);
  std::string output;
  char buffer[512];
  while (std::fgets(buffer, sizeof(buffer), child) != nullptr) output += buffer;
  const int status = pclose(child);
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("[  PASSED  ] 1 test"), std::string::npos) << output;
}

}  // namespace
}  // namespace ringside

// The compression hooks' state for checkpoints, without a job: the reader
// that ImportState walks (its refusals name the hook and the sizes), and
// ring's own hook, which keeps no state and refuses any.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "worker/strategies/allreduce/bucket_comm_hook.h"

namespace ringside {
namespace {

using ::testing::HasSubstr;

TEST(HookStateReaderTest, TakesInOrderAndRefusesWhatDoesNotFit) {
  const std::vector<float> state = {1, 2, 3, 4, 5};
  HookStateReader reader("top-k", state);
  absl::StatusOr<absl::Span<const float>> a = reader.Take(2);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(std::vector<float>(a->begin(), a->end()),
            std::vector<float>({1, 2}));
  absl::StatusOr<absl::Span<const float>> b = reader.Take(3);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ((*b)[2], 5);
  EXPECT_TRUE(reader.Done().ok());
  // One float more than there is.
  HookStateReader short_reader("PowerSGD", state);
  EXPECT_TRUE(short_reader.Take(4).ok());
  const absl::Status over = short_reader.Take(2).status();
  EXPECT_TRUE(absl::IsInvalidArgument(over));
  EXPECT_THAT(over.message(), HasSubstr("PowerSGD state: 5 floats"));
  // Floats left over.
  HookStateReader long_reader("sign", state);
  EXPECT_TRUE(long_reader.Take(4).ok());
  EXPECT_THAT(long_reader.Done().message(),
              HasSubstr("sign state: 5 floats, but these buckets take 4"));
}

TEST(HookStateReaderTest, RingsOwnHookKeepsNoState) {
  std::unique_ptr<BucketCommHook> hook = MakeAllReduceHook();
  const std::vector<BucketSpan> buckets = {{0, 10}};
  EXPECT_TRUE(hook->ExportState(buckets).empty());
  EXPECT_TRUE(hook->ImportState(buckets, {}).ok());
  const std::vector<float> some = {1};
  EXPECT_TRUE(absl::IsInvalidArgument(hook->ImportState(buckets, some)));
}

}  // namespace
}  // namespace ringside

// BucketCommThread queues a bucket only once all its tensors are ready,
// reduces the step's buckets in backward's order and arms the next step,
// names a failed bucket's tensors, ends a step missing a tensor in a
// deadline naming the buckets' work, and
// draws QUEUE and the strategy's spans on every tensor's lane.
#include "worker/strategies/comm/bucket_comm_thread.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace ringside {
namespace {

// Tensors of 2, 1, 3 and 1 elements: caps of 12 bytes give the buckets
// {2, 3} (first, 16 bytes) and {0, 1} (12 bytes).
TensorLayout Layout() {
  absl::StatusOr<TensorLayout> layout = TensorLayout::FromShapes(
      {{"a", {2}}, {"b", {1}}, {"c", {3}}, {"d", {1}}});
  EXPECT_TRUE(layout.ok());
  return *layout;
}

struct Reduced {
  absl::Mutex mu;
  std::vector<std::pair<int, int64_t>> buckets;  // (first tensor, step)
};

TEST(BucketCommThreadTest, ReducesEachBucketOnceAllItsTensorsAreReady) {
  const TensorLayout layout = Layout();
  Reduced reduced;
  BucketCommThread comm(
      &layout, 12, 12, nullptr, "buckets reduced",
      [&](const GradientBucket& bucket, int64_t step) {
        absl::MutexLock lock(&reduced.mu);
        reduced.buckets.push_back({bucket.first_tensor, step});
        return absl::OkStatus();
      });
  ASSERT_EQ(comm.buckets().size(), 2u);
  EXPECT_EQ(comm.buckets()[0].first_tensor, 2);
  EXPECT_EQ(comm.buckets()[0].size, 4);
  EXPECT_EQ(comm.buckets()[1].first_tensor, 0);
  for (int64_t step : {0, 1}) {
    comm.OnGradientReady(3);
    comm.OnGradientReady(1);
    {  // neither bucket is complete yet
      absl::SleepFor(absl::Milliseconds(20));
      absl::MutexLock lock(&reduced.mu);
      EXPECT_EQ(reduced.buckets.size(), static_cast<size_t>(2 * step));
    }
    comm.OnGradientReady(2);
    comm.OnGradientReady(0);
    ASSERT_TRUE(comm.WaitForStep(step, absl::Seconds(10)).ok());
  }
  absl::MutexLock lock(&reduced.mu);
  const std::vector<std::pair<int, int64_t>> want = {
      {2, 0}, {0, 0}, {2, 1}, {0, 1}};
  EXPECT_EQ(reduced.buckets, want);
}

TEST(BucketCommThreadTest, AMissingTensorEndsTheStepInADeadline) {
  const TensorLayout layout = Layout();
  BucketCommThread comm(
      &layout, 12, 12, nullptr, "gradient buckets all-reduced",
      [](const GradientBucket&, int64_t) { return absl::OkStatus(); });
  for (int t : {3, 2, 1}) comm.OnGradientReady(t);
  absl::Status s = comm.WaitForStep(4, absl::Milliseconds(200));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_NE(s.message().find("step 4: only 1 of 2 gradient buckets "
                             "all-reduced"),
            std::string::npos)
      << s;
}

TEST(BucketCommThreadTest, TheFirstErrorIsReturned) {
  const TensorLayout layout = Layout();
  BucketCommThread comm(&layout, 12, 12, nullptr, "buckets reduced",
                        [](const GradientBucket& bucket, int64_t) {
                          return bucket.first_tensor == 2
                                     ? absl::UnavailableError("peer gone")
                                     : absl::OkStatus();
                        });
  for (int t : {3, 2, 1, 0}) comm.OnGradientReady(t);
  absl::Status s = comm.WaitForStep(0, absl::Seconds(10));
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_EQ(s.message(), "tensors c .. d: peer gone");  // the bucket's
}

TEST(BucketCommThreadTest, SpansGoOnEveryTensorsLane) {
  const TensorLayout layout = Layout();
  const std::string path =
      std::string(std::getenv("TEST_TMPDIR")) + "/bucket_timeline.json";
  {
    absl::StatusOr<std::unique_ptr<Timeline>> timeline =
        Timeline::Open(path, 0);
    ASSERT_TRUE(timeline.ok()) << timeline.status();
    BucketCommThread* self = nullptr;
    BucketCommThread comm(&layout, 12, 12, timeline->get(), "buckets reduced",
                          [&](const GradientBucket& bucket, int64_t step) {
                            self->QueueSpans(bucket, 2.0, step, 2);
                            self->SpanEachTensor(bucket, "ALLREDUCE", 2.0, 3.0,
                                                 step, 2);
                            return absl::OkStatus();
                          });
    self = &comm;
    for (int t : {3, 2, 1, 0}) comm.OnGradientReady(t);
    ASSERT_TRUE(comm.WaitForStep(0, absl::Seconds(10)).ok());
    comm.Stop();
    ASSERT_TRUE((*timeline)->Close().ok());
  }
  std::ifstream in(path);
  const nlohmann::json events = nlohmann::json::parse(in);
  std::map<std::string, std::map<std::string, nlohmann::json>> spans;
  std::map<int, std::string> lane_name;
  for (const nlohmann::json& e : events) {
    if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name") {
      lane_name[e["tid"].get<int>()] = e["args"]["name"].get<std::string>();
    }
  }
  for (const nlohmann::json& e : events) {
    if (e.value("ph", "") != "X") continue;
    spans[lane_name[e["tid"].get<int>()]][e["name"].get<std::string>()] =
        e["args"];
  }
  for (const char* tensor : {"a", "b", "c", "d"}) {
    ASSERT_TRUE(spans[tensor].count("QUEUE")) << tensor;
    ASSERT_TRUE(spans[tensor].count("ALLREDUCE")) << tensor;
  }
  // Bytes at 2 per element: the tensor's own, and its bucket's.
  EXPECT_EQ(spans["c"]["ALLREDUCE"]["bytes"], 6);
  EXPECT_EQ(spans["c"]["ALLREDUCE"]["bucket_bytes"], 8);
  EXPECT_EQ(spans["a"]["QUEUE"]["bytes"], 4);
  EXPECT_EQ(spans["a"]["QUEUE"]["bucket_bytes"], 6);
}

}  // namespace
}  // namespace ringside

// PsSession::UseBuffers: after it, a step pushes the given gradient and
// pulls the next version into the given parameters (every element), and
// leaves the spans Start was given alone; a span of the wrong size is
// refused with both sizes.
#include "worker/strategies/ps/ps_session.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "absl/time/time.h"
#include "server/local_ps_cluster.h"
#include "worker/strategies/ps/ps_options.h"

namespace ringside {
namespace {

constexpr int64_t kElements = 3000;  // several chunks at 4 KiB a chunk

class PsSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<LocalPsCluster>> ps =
        LocalPsCluster::Start(2, 1, absl::Seconds(30));
    ASSERT_TRUE(ps.ok()) << ps.status();
    ps_ = *std::move(ps);
    absl::StatusOr<TensorLayout> layout =
        TensorLayout::FromShapes({{"w", {kElements - 1000}}, {"b", {1000}}});
    ASSERT_TRUE(layout.ok()) << layout.status();
    context_.layout = *layout;
    context_.params = absl::MakeSpan(params_);
    context_.grads = absl::MakeSpan(grads_);
    context_.optimizer.lr = 0.5f;
    context_.optimizer.momentum = 0.0f;
    context_.options.servers = ps_->addresses();
    PsOptions ps_options;
    ps_options.chunk_bytes = 4096;
    context_.options.strategy.Set(ps_options);
    absl::StatusOr<std::unique_ptr<PsSession>> session =
        PsSession::Start(context_, /*overlap=*/false);
    ASSERT_TRUE(session.ok()) << session.status();
    session_ = *std::move(session);
  }
  void TearDown() override {
    if (session_ != nullptr) {
      EXPECT_TRUE(session_->Shutdown().ok());
    }
  }

  std::unique_ptr<LocalPsCluster> ps_;
  std::vector<float> params_ = std::vector<float>(kElements, 1.0f);
  std::vector<float> grads_ = std::vector<float>(kElements, 0.0f);
  SyncContext context_;
  std::unique_ptr<PsSession> session_;
};

TEST_F(PsSessionTest, StepsPushAndPullTheHandedOverBuffers) {
  std::vector<float> pulled(kElements, NAN);
  std::vector<float> grads(kElements, 2.0f);
  ASSERT_TRUE(
      session_->UseBuffers(absl::MakeSpan(pulled), absl::MakeSpan(grads)).ok());
  absl::StatusOr<StepStats> stats = session_->FinishStep(0);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->bytes_sent, kElements * 4);
  for (int64_t i = 0; i < kElements; ++i) {
    ASSERT_EQ(pulled[i], 1.0f - 0.5f * 2.0f) << "element " << i;
    ASSERT_EQ(params_[i], 1.0f) << "Start's params, element " << i;
  }
  // Back to Start's spans: its zero gradient leaves version 1 as it is.
  ASSERT_TRUE(
      session_->UseBuffers(absl::MakeSpan(params_), absl::MakeSpan(grads_))
          .ok());
  ASSERT_TRUE(session_->FinishStep(1).ok());
  EXPECT_EQ(params_, pulled);
}

TEST_F(PsSessionTest, RefusesBuffersOfTheWrongSize) {
  std::vector<float> short_params(kElements - 1), grads(kElements);
  absl::Status status =
      session_->UseBuffers(absl::MakeSpan(short_params), absl::MakeSpan(grads));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("params has 2999"), std::string::npos)
      << status;
  EXPECT_NE(status.message().find("the layout has 3000"), std::string::npos)
      << status;
}

}  // namespace
}  // namespace ringside

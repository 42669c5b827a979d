// The equivalence oracle for dps: K in {1, 2, 3} servers x N in {1, 2, 4}
// workers (K = 3 exercises uneven ranges), with overlap on and off.
#include <gtest/gtest.h>

#include "tests/testing/oracle_harness.h"

namespace ringside::testing {
namespace {

class DpsOracleTest
    : public ::testing::TestWithParam<std::tuple<int, int, bool>> {};

TEST_P(DpsOracleTest, MatchesSingleWorkerWithGlobalBatch) {
  const auto [k, n, overlap] = GetParam();
  OracleSetup setup;
  setup.num_servers = k;
  setup.sync.overlap = overlap;
  absl::StatusOr<TrainResult> reference = RunReference(setup, n);
  ASSERT_TRUE(reference.ok()) << reference.status();
  absl::StatusOr<OracleRun> run = RunWorkers(setup, "dps", n);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(MatchesReference(*run, *reference));
}

INSTANTIATE_TEST_SUITE_P(ServersWorkersOverlap, DpsOracleTest,
                         ::testing::Combine(::testing::Values(1, 2, 3),
                                            ::testing::Values(1, 2, 4),
                                            ::testing::Bool()));

}  // namespace
}  // namespace ringside::testing

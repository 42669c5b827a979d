// compare's plan of a sweep on a made-up registry: placement=rank0 puts a
// one-server strategy's server beside rank 0 and names it in the row;
// any other placement, or a strategy without exactly one server, is
// refused naming why. A row's precision is one of its run flags; the GPUs
// a CUDA run needs follow NCCL and --gpu_per_worker.
#include "experiments/comparison/compare_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

namespace ringside::compare {
namespace {

using ::testing::HasSubstr;

std::vector<ListedStrategy> Registry() {
  ListedStrategy baseline;
  baseline.name = "baseline";
  baseline.display_name = "Baseline";
  ListedStrategy sps;
  sps.name = "sps";
  sps.display_name = "SPS";
  sps.servers = ServerKind::kOne;
  ListedStrategy dps;
  dps.name = "dps";
  dps.display_name = "DPS";
  dps.servers = ServerKind::kSharded;
  ListedStrategy ring;
  ring.name = "ring";
  ring.display_name = "Ring";
  ring.gpu_per_rank = true;
  return {baseline, sps, dps, ring};
}

TEST(ComparePlanTest, PlacementRankZeroPutsTheServerBesideRankZero) {
  absl::StatusOr<std::vector<ListedStrategy>> plan =
      Plan(Registry(), "sps@placement=rank0,sps");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->size(), 3u);  // the baseline first
  const ListedStrategy& beside = (*plan)[1];
  EXPECT_TRUE(beside.servers_beside_rank0);
  EXPECT_EQ(beside.display_name, "SPS [server beside rank 0]");
  EXPECT_TRUE(beside.run_flags.empty());  // not a worker flag
  EXPECT_FALSE((*plan)[2].servers_beside_rank0);
  EXPECT_EQ((*plan)[2].display_name, "SPS");
}

TEST(ComparePlanTest, PlacementIsRefusedWhereItMeansNothing) {
  for (const char* entry : {"sps@placement=rank1", "dps@placement=rank0",
                            "ring@placement=rank0"}) {
    absl::StatusOr<std::vector<ListedStrategy>> plan = Plan(Registry(), entry);
    ASSERT_FALSE(plan.ok()) << entry;
    EXPECT_TRUE(absl::IsInvalidArgument(plan.status())) << entry;
    EXPECT_THAT(std::string(plan.status().message()),
                HasSubstr("only for a strategy with one parameter server"))
        << entry;
  }
}

TEST(ComparePlanTest, PrecisionIsARowsOwnFlagAndNamed) {
  absl::StatusOr<std::vector<ListedStrategy>> plan =
      Plan(Registry(), "ring,ring@precision=bf16,baseline@precision=bf16");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->size(), 4u);
  EXPECT_EQ((*plan)[2].display_name, "Ring [precision=bf16]");
  EXPECT_EQ((*plan)[2].run_flags, std::vector<std::string>{"--precision=bf16"});
  EXPECT_EQ((*plan)[3].display_name, "Baseline [precision=bf16]");
}

TEST(ComparePlanTest, GpusNeededFollowNcclAndGpuPerWorker) {
  const std::vector<ListedStrategy> r = Registry();
  const ListedStrategy& sps = r[1];
  const ListedStrategy& ring = r[3];
  EXPECT_EQ(GpusNeeded(ring, 4, false), 4);  // a distinct GPU per rank
  EXPECT_EQ(GpusNeeded(sps, 4, false), 1);   // workers may share one
  EXPECT_EQ(GpusNeeded(sps, 4, true), 4);    // a node of 4 GPUs
  EXPECT_EQ(GpusNeeded(ring, 1, true), 1);
}

}  // namespace
}  // namespace ringside::compare

// ResolveRank: flags win, then torchrun, Open MPI and SLURM variables.
#include "common/launch_env.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace ringside {
namespace {

class LaunchEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v :
         {"RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
          "SLURM_PROCID", "SLURM_NTASKS"}) {
      unsetenv(v);
    }
  }
};

TEST_F(LaunchEnvTest, NothingSetMeansOneWorker) {
  absl::StatusOr<RankInfo> info = ResolveRank(-1, -1);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->rank, 0);
  EXPECT_EQ(info->world_size, 1);
}

TEST_F(LaunchEnvTest, ReadsEachLauncher) {
  setenv("SLURM_PROCID", "3", 1);
  setenv("SLURM_NTASKS", "8", 1);
  absl::StatusOr<RankInfo> info = ResolveRank(-1, -1);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->rank, 3);
  EXPECT_EQ(info->world_size, 8);
  EXPECT_EQ(info->source, "slurm");

  setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  info = ResolveRank(-1, -1);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->source, "openmpi");
  EXPECT_EQ(info->rank, 1);

  setenv("RANK", "0", 1);
  setenv("WORLD_SIZE", "4", 1);
  info = ResolveRank(-1, -1);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->source, "torchrun");
  EXPECT_EQ(info->world_size, 4);
}

TEST_F(LaunchEnvTest, FlagsWin) {
  setenv("RANK", "2", 1);
  setenv("WORLD_SIZE", "4", 1);
  absl::StatusOr<RankInfo> info = ResolveRank(1, 2);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->rank, 1);
  EXPECT_EQ(info->world_size, 2);
  EXPECT_EQ(info->source, "flags");
}

TEST_F(LaunchEnvTest, RejectsBadValues) {
  EXPECT_EQ(ResolveRank(2, 2).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ResolveRank(0, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  setenv("RANK", "x", 1);
  setenv("WORLD_SIZE", "4", 1);
  absl::Status s = ResolveRank(-1, -1).status();
  EXPECT_NE(s.message().find("RANK='x' is not an integer"), std::string::npos)
      << s;
}

}  // namespace
}  // namespace ringside

// Sharded checkpoints resharded on load: files written by N ranks with one
// plan give every rank of M ranks, with another plan, exactly its pieces of
// the parameters and of each optimizer-state buffer; the newest complete
// set is the one loaded; gaps, mixed steps and other optimizers are refused
// naming what is wrong.
#include "worker/strategies/sharded/sharded_checkpoint.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/checkpoint.h"
#include "worker/strategies/sharded/tensor_shards.h"

namespace ringside {
namespace {

TensorLayout Layout() {
  return *TensorLayout::FromShapes({{"w", {6, 10}}, {"b", {40}}});  // 100
}

OptimizerConfig Adam() {
  OptimizerConfig o;
  o.type = "adam";
  return o;
}

// The value of buffer `b` (0: parameters, 1: m, 2: v) at element i, at
// `step`.
float Value(int b, int64_t i, int64_t step) {
  return static_cast<float>(1000 * b + i) + 0.25f * step;
}

std::string NewDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/" + name;
  ::mkdir(dir.c_str(), 0755);
  return dir;
}

// Writes the files of `ranks` ranks with `plan` at `step`.
void WriteSet(const std::string& dir, const ShardPlan& plan, int ranks,
              int64_t step) {
  for (int r = 0; r < ranks; ++r) {
    const TensorShards shards(Layout(), plan, r);
    Checkpoint c;
    c.step = step;
    c.shard = r;
    c.num_shards = ranks;
    c.layout = Layout();
    c.optimizer = Adam();
    c.pieces = shards.pieces();
    for (int b = 0; b < 3; ++b) {
      std::vector<float>& out = b == 0 ? c.params : c.optimizer_state;
      for (const KeyRange& p : c.pieces) {
        for (int64_t i = p.begin; i < p.end; ++i) out.push_back(Value(b, i, step));
      }
    }
    ASSERT_TRUE(
        WriteCheckpointFile(ShardCheckpointPath(dir, r, ranks), c).ok());
  }
}

// Loads rank `r` of `ranks` with `plan`; checks every element it owns.
void ExpectLoads(const std::string& dir, const ShardFileSet& set,
                 const ShardPlan& plan, int ranks, int r) {
  const TensorShards shards(Layout(), plan, r);
  std::vector<float> params(100, -1.0f);
  std::vector<float> m(shards.owned_elements()), v(shards.owned_elements());
  const absl::Status s = LoadShardPieces(
      dir, set, Layout(), Adam(), shards.pieces(), r % set.num_shards,
      absl::MakeSpan(params), {absl::MakeSpan(m), absl::MakeSpan(v)});
  ASSERT_TRUE(s.ok()) << s;
  int64_t at = 0;
  for (const KeyRange& p : shards.pieces()) {
    for (int64_t i = p.begin; i < p.end; ++i, ++at) {
      ASSERT_EQ(params[i], Value(0, i, set.step)) << "rank " << r << " " << i;
      ASSERT_EQ(m[at], Value(1, i, set.step)) << "rank " << r << " " << i;
      ASSERT_EQ(v[at], Value(2, i, set.step)) << "rank " << r << " " << i;
    }
  }
}

TEST(ShardedCheckpointTest, AnyRanksAndPlanLoadExactlyTheirPieces) {
  const std::string dir = NewDir("two_contiguous");
  WriteSet(dir, *ContiguousShardPlan(Layout(), 2), 2, 7);
  absl::StatusOr<ShardFileSet> set = FindNewestShardSet(dir, 3);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->num_shards, 2);
  EXPECT_EQ(set->step, 7);
  // 2 contiguous shards onto 1, 2, 3 and 4 ranks with per-unit plans (a
  // unit per tensor), and back onto 2 contiguous shards.
  for (int ranks : {1, 2, 3, 4}) {
    const ShardPlan plan = PerUnitShardPlan({{0, 60}, {60, 100}}, ranks);
    for (int r = 0; r < ranks; ++r) ExpectLoads(dir, *set, plan, ranks, r);
  }
  for (int r = 0; r < 2; ++r) {
    ExpectLoads(dir, *set, *ContiguousShardPlan(Layout(), 2), 2, r);
  }
}

TEST(ShardedCheckpointTest, TheNewestCompleteSetIsLoaded) {
  const std::string dir = NewDir("newest");
  WriteSet(dir, *ContiguousShardPlan(Layout(), 2), 2, 7);
  WriteSet(dir, PerUnitShardPlan({{0, 60}, {60, 100}}, 3), 3, 9);
  absl::StatusOr<ShardFileSet> set = FindNewestShardSet(dir, 2);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->num_shards, 3);
  EXPECT_EQ(set->step, 9);
  ExpectLoads(dir, *set, *ContiguousShardPlan(Layout(), 2), 2, 1);
  // An incomplete newer set (one file of 4) is not a checkpoint.
  WriteSet(dir, *ContiguousShardPlan(Layout(), 4), 1, 11);
  ::rename(ShardCheckpointPath(dir, 0, 1).c_str(),
           ShardCheckpointPath(dir, 0, 4).c_str());
  set = FindNewestShardSet(dir, 2);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->step, 9);
}

TEST(ShardedCheckpointTest, NoCompleteSetNamesWhatItFound) {
  const std::string dir = NewDir("incomplete");
  WriteSet(dir, *ContiguousShardPlan(Layout(), 2), 2, 7);
  ::remove(ShardCheckpointPath(dir, 1, 2).c_str());
  absl::Status s = FindNewestShardSet(dir, 2).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_NE(s.message().find("no checkpoint at"), std::string::npos) << s;
  EXPECT_NE(s.message().find("files 1 of 2"), std::string::npos) << s;
}

TEST(ShardedCheckpointTest, GapsMixedStepsAndOtherOptimizersAreRefused) {
  // File 1 of a step other than file 0's.
  std::string dir = NewDir("mixed");
  WriteSet(dir, *ContiguousShardPlan(Layout(), 2), 2, 7);
  const std::string second = dir + "/second";
  ::mkdir(second.c_str(), 0755);
  WriteSet(second, *ContiguousShardPlan(Layout(), 2), 2, 8);
  ::rename(ShardCheckpointPath(second, 1, 2).c_str(),
           ShardCheckpointPath(dir, 1, 2).c_str());
  const TensorShards whole(Layout(), PerUnitShardPlan({{0, 100}}, 1), 0);
  std::vector<float> params(100), m(100), v(100);
  absl::Status s = LoadShardPieces(
      dir, ShardFileSet{2, 7}, Layout(), Adam(), whole.pieces(), 0,
      absl::MakeSpan(params), {absl::MakeSpan(m), absl::MakeSpan(v)});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("of step 8"), std::string::npos) << s;

  // Files that leave elements out: a set of 2 where file 1 holds fewer.
  dir = NewDir("gap");
  WriteSet(dir, PerUnitShardPlan({{0, 100}}, 2), 2, 5);  // [0,50) [50,100)
  {
    absl::StatusOr<Checkpoint> c =
        ReadCheckpointFile(ShardCheckpointPath(dir, 1, 2));
    ASSERT_TRUE(c.ok());
    c->pieces = {KeyRange{60, 100}};
    c->params.erase(c->params.begin(), c->params.begin() + 10);
    std::vector<float> state(c->optimizer_state.begin() + 10,
                             c->optimizer_state.begin() + 50);
    state.insert(state.end(), c->optimizer_state.begin() + 60,
                 c->optimizer_state.end());
    c->optimizer_state = state;
    ASSERT_TRUE(WriteCheckpointFile(ShardCheckpointPath(dir, 1, 2), *c).ok());
  }
  s = LoadShardPieces(dir, ShardFileSet{2, 5}, Layout(), Adam(),
                      whole.pieces(), 0, absl::MakeSpan(params),
                      {absl::MakeSpan(m), absl::MakeSpan(v)});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("do not hold element 50"), std::string::npos)
      << s;

  // Another optimizer: one state buffer per parameter, not Adam's two.
  OptimizerConfig sgd;
  sgd.momentum = 0.9f;
  s = LoadShardPieces(dir, ShardFileSet{2, 5}, Layout(), sgd, whole.pieces(),
                      0, absl::MakeSpan(params), {absl::MakeSpan(m)});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("optimizer"), std::string::npos) << s;
}

}  // namespace
}  // namespace ringside

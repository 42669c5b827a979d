// Tests of the collective benchmark harness: the nccl-tests measures on hand
// numbers, the sweep plan, the child protocol, and a tiny 2-rank sweep of
// "ours" and "gloo" through the harness with no wrong element.
#include <string>
#include <vector>

#include "experiments/bench/collective_bench_backends.h"
#include "experiments/bench/collective_bench_harness.h"
#include "experiments/cost/measured_collectives.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringside {
namespace {

using ::testing::HasSubstr;

TEST(Measures, AlgbwIsBytesOverSeconds) {
  EXPECT_DOUBLE_EQ(AlgBandwidthGBps(1000000000, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(AlgBandwidthGBps(4096, 4.096e-6), 1.0);
  EXPECT_DOUBLE_EQ(AlgBandwidthGBps(256 << 20, 0.5), 0.536870912);
  EXPECT_EQ(AlgBandwidthGBps(4096, 0), 0);
}

TEST(Measures, BusbwIsAlgbwTimesTwoNMinusOneOverN) {
  EXPECT_DOUBLE_EQ(AllReduceBusBandwidthGBps(1000000000, 1.0, 2), 1.0);
  EXPECT_DOUBLE_EQ(AllReduceBusBandwidthGBps(1000000000, 1.0, 4), 1.5);
  EXPECT_DOUBLE_EQ(AllReduceBusBandwidthGBps(1000000000, 2.0, 8), 0.875);
  EXPECT_EQ(AllReduceBusBandwidthGBps(1000000000, 1.0, 1), 0);
}

// collective_bench's printed table reads back as measured collectives
// (a cluster file's *_collectives): each op, its ranks and its times.
TEST(Measures, ThePrintedTableReadsBackAsMeasuredCollectives) {
  AllReduceBackend backend;
  backend.name = "gloo";
  backend.description = "made-up timings";
  SweepResult result;
  for (int64_t bytes : {4096, 65536, 1048576}) {
    SizeMeasurement m;
    m.plan.bytes = bytes;
    m.plan.count = bytes / 4;
    m.plan.iters = 10;
    m.seconds = 1e-5 + static_cast<double>(bytes) * 1e-9;
    result.sizes.push_back(m);
  }
  for (BenchOp op : {BenchOp::kAllReduce, BenchOp::kReduceScatter,
                     BenchOp::kAllGatherV}) {
    const std::string table = FormatBackendTable(backend, 4, result, op);
    absl::StatusOr<MeasuredCollectives> m =
        MeasuredCollectives::Parse(table, "bench.txt");
    ASSERT_TRUE(m.ok()) << m.status() << "\n" << table;
    ASSERT_EQ(m->runs().size(), 1u);
    EXPECT_EQ(m->runs()[0].ranks, 4);
    EXPECT_EQ(m->runs()[0].op, op == BenchOp::kAllReduce
                                   ? CollectiveOp::kAllReduce
                               : op == BenchOp::kReduceScatter
                                   ? CollectiveOp::kReduceScatter
                                   : CollectiveOp::kAllGather);
    ASSERT_EQ(m->runs()[0].points.size(), 3u);
    // The printed time has 0.1 us resolution.
    EXPECT_NEAR(m->runs()[0].points[2].seconds, result.sizes[2].seconds,
                0.05e-6);
  }
}

TEST(Measures, ShardedOpsBusbwIsAlgbwTimesNMinusOneOverN) {
  EXPECT_DOUBLE_EQ(
      BusBandwidthGBps(BenchOp::kReduceScatter, 1000000000, 1.0, 4), 0.75);
  EXPECT_DOUBLE_EQ(BusBandwidthGBps(BenchOp::kAllGatherV, 1000000000, 1.0, 2),
                   0.5);
  EXPECT_DOUBLE_EQ(BusBandwidthGBps(BenchOp::kAllReduce, 1000000000, 1.0, 4),
                   1.5);
  EXPECT_EQ(BusBandwidthGBps(BenchOp::kAllGatherV, 1000000000, 1.0, 1), 0);
  EXPECT_EQ(BalancedShards(10, 4), (std::vector<int64_t>{3, 3, 2, 2}));
  EXPECT_EQ(BalancedShards(2, 3), (std::vector<int64_t>{1, 1, 0}));
  for (BenchOp op :
       {BenchOp::kAllReduce, BenchOp::kReduceScatter, BenchOp::kAllGatherV}) {
    EXPECT_EQ(*ParseBenchOp(BenchOpName(op)), op);
  }
  EXPECT_THAT(std::string(ParseBenchOp("alltoall").status().message()),
              HasSubstr("known: allreduce, reduce_scatter, allgatherv"));
}

TEST(Plan, SizesGrowByStepAndLargeSizesRunFewerIterations) {
  SweepOptions o;  // 4 KiB .. 256 MiB x4, cap 1 GiB
  o.iters = 20;
  o.warmup_iters = 5;
  absl::StatusOr<std::vector<SizePlan>> plan = PlanSweep(o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->size(), 9u);
  EXPECT_EQ(plan->front().bytes, 4096);
  EXPECT_EQ(plan->front().count, 1024);
  EXPECT_EQ(plan->front().iters, 20);
  EXPECT_EQ(plan->front().warmup_iters, 5);
  EXPECT_EQ((*plan)[7].bytes, 64 << 20);
  EXPECT_EQ((*plan)[7].iters, 16);
  EXPECT_EQ((*plan)[7].warmup_iters, 4);
  EXPECT_EQ(plan->back().bytes, 256 << 20);
  EXPECT_EQ(plan->back().iters, 4);
  EXPECT_EQ(plan->back().warmup_iters, 1);

  o.step_factor = 1;
  EXPECT_FALSE(PlanSweep(o).ok());
}

TEST(Plan, FlagsRoundTrip) {
  SweepOptions o;
  o.max_bytes = 64 << 10;
  std::vector<SizePlan> plan = *PlanSweep(o);
  std::vector<std::string> flags = PlanToFlags(plan);
  ASSERT_EQ(flags.size(), 3u);
  EXPECT_EQ(flags[0], "--sizes=4096,16384,65536");
  absl::StatusOr<std::vector<SizePlan>> back = PlanFromLists(
      {"4096", "16384", "65536"}, {"20", "20", "20"}, {"5", "5", "5"});
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->size(), 3u);
  EXPECT_EQ((*back)[2].count, 16384);
  EXPECT_FALSE(PlanFromLists({"4096"}, {}, {}).ok());
}

TEST(Protocol, SizeLineRoundTrip) {
  SizeMeasurement m;
  m.plan = {4096, 1024, 20, 5};
  m.seconds = 12.5e-6;
  m.wrong = 3;
  absl::StatusOr<SizeMeasurement> back = ParseSizeLine(SizeLineJson(m).dump());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->plan.bytes, 4096);
  EXPECT_EQ(back->plan.iters, 20);
  EXPECT_NEAR(back->seconds, 12.5e-6, 1e-12);
  EXPECT_EQ(back->wrong, 3);
  EXPECT_FALSE(ParseSizeLine("{\"bytes\": 1}").ok());
  EXPECT_FALSE(ParseSizeLine("not json").ok());
}

TEST(Protocol, ParseBytes) {
  EXPECT_EQ(*ParseBytes("4096"), 4096);
  EXPECT_EQ(*ParseBytes("4K"), 4096);
  EXPECT_EQ(*ParseBytes("64KiB"), 65536);
  EXPECT_EQ(*ParseBytes("256M"), 256 << 20);
  EXPECT_EQ(*ParseBytes("1G"), int64_t{1} << 30);
  EXPECT_FALSE(ParseBytes("lots").ok());
}

TEST(Correctness, ClosedFormSum) {
  for (int64_t i : {0, 5, 12, 13, 100}) {
    float sum = 0;
    for (int r = 0; r < 3; ++r) sum += FillValue(r, i);
    EXPECT_EQ(sum, ExpectedSum(3, i)) << i;
  }
}

TEST(Mpirun, CommandLine) {
  BenchBackendOptions o;
  o.mpi_peer = "/bin/peer";
  SizePlan p{4096, 1024, 2, 1};
  std::vector<std::string> argv = MpirunArgv(o, 3, {p});
  EXPECT_THAT(argv, ::testing::ElementsAre("mpirun", "--oversubscribe",
                                           "--allow-run-as-root", "-np", "3",
                                           "/bin/peer", "--sizes=4096",
                                           "--iters=2", "--warmup_iters=1"));
}

TEST(Mpirun, MissingMpirunIsReportedNotFatal) {
  BenchBackendOptions o;
  o.mpirun = "/nonexistent/mpirun";
  o.mpi_peer = "/bin/true";
  o.mpi_deadline = absl::Seconds(20);
  SweepResult r =
      RunBackend(MakeMpiBackend(o), 2, {SizePlan{4096, 1024, 2, 1}});
  EXPECT_FALSE(r.status.ok());
  EXPECT_TRUE(r.sizes.empty());
  EXPECT_THAT(FormatBackendTable(MakeMpiBackend(o), 2, r),
              HasSubstr("mpi unavailable"));
}

TEST(Sweep, TinyTwoRankSweepOfOursAndGlooHasNoWrongElement) {
  SweepOptions o;
  o.min_bytes = 4 << 10;
  o.max_bytes = 64 << 10;
  o.iters = 2;
  o.warmup_iters = 1;
  std::vector<SizePlan> plan = *PlanSweep(o);
  ASSERT_EQ(plan.size(), 3u);
  BenchBackendOptions options;
  options.connect_timeout = absl::Seconds(30);
  options.op_timeout = absl::Seconds(30);
  std::vector<std::string> names;
  std::vector<SweepResult> results;
  for (const char* name : {"ours", "gloo"}) {
    absl::StatusOr<AllReduceBackend> b = MakeBackend(name, options);
    ASSERT_TRUE(b.ok()) << b.status();
    SweepResult r = RunBackend(*b, 2, plan);
    ASSERT_TRUE(r.status.ok()) << name << ": " << r.status;
    ASSERT_EQ(r.sizes.size(), 3u) << name;
    for (const SizeMeasurement& m : r.sizes) {
      EXPECT_EQ(m.wrong, 0) << name << " " << m.plan.bytes;
      EXPECT_GT(m.seconds, 0) << name << " " << m.plan.bytes;
    }
    const std::string table = FormatBackendTable(*b, 2, r);
    EXPECT_THAT(table, HasSubstr("#wrong"));
    EXPECT_THAT(table, HasSubstr("busbw"));
    EXPECT_EQ(RowJson(name, 2, r.sizes[0])["wrong"], 0);
    names.push_back(name);
    results.push_back(r);
  }
  const std::string comparison = FormatComparison(names, results, 0);
  EXPECT_THAT(comparison, HasSubstr("ours/gloo"));
  EXPECT_THAT(comparison, HasSubstr("65536"));
}

// One rank whose all-reduce does nothing (the sum over one rank is its own
// buffer), and counts its barriers.
class IdleComm : public HostRankComm {
 public:
  absl::Status Barrier() override {
    ++barriers;
    return absl::OkStatus();
  }
  int barriers = 0;

 protected:
  absl::Status AllReduceInPlace(absl::Span<float>) override {
    return absl::OkStatus();
  }
};

// With busy_before_us each timed call follows a barrier and the busy-wait,
// which the timing leaves out: three calls after 2 ms each take the wall
// time of the waits but time only the calls.
TEST(Plan, BusyStartsWaitBeforeEachCallWithoutTimingTheWait) {
  SweepOptions o;
  o.min_bytes = o.max_bytes = 4 << 10;
  o.iters = 3;
  o.warmup_iters = 0;
  o.busy_before_us = 2000;
  const std::vector<SizePlan> plan = *PlanSweep(o);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].busy_before_us, 2000);
  IdleComm comm;
  std::vector<float> scratch;
  const absl::Time start = absl::Now();
  absl::StatusOr<RankMeasurement> m =
      MeasureOnRank(comm, 0, 1, plan[0], scratch, BenchOp::kAllReduce);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(6));
  EXPECT_LT(m->mean_seconds, 2e-3);
  EXPECT_EQ(m->wrong, 0);
  EXPECT_EQ(comm.barriers, 1 + 3);  // after the warm-up, then per call
  // Back to back (the default), one barrier before the timed calls.
  o.busy_before_us = -1;
  IdleComm back_to_back;
  ASSERT_TRUE(MeasureOnRank(back_to_back, 0, 1, (*PlanSweep(o))[0], scratch,
                            BenchOp::kAllReduce)
                  .ok());
  EXPECT_EQ(back_to_back.barriers, 1);
}

// The sharded pair on three ranks (shards of unequal length): ours runs
// both without a wrong element; raw Gloo runs allgatherv and says it does
// not run reduce_scatter.
TEST(Sweep, ShardedOpsOfOursAndGlooHaveNoWrongElement) {
  const std::vector<SizePlan> plan = {SizePlan{4100, 1025, 2, 1},
                                      SizePlan{65536, 16384, 2, 1}};
  BenchBackendOptions options;
  options.connect_timeout = absl::Seconds(30);
  options.op_timeout = absl::Seconds(30);
  for (BenchOp op : {BenchOp::kReduceScatter, BenchOp::kAllGatherV}) {
    for (const char* name : {"ours", "gloo"}) {
      absl::StatusOr<AllReduceBackend> b = MakeBackend(name, options);
      ASSERT_TRUE(b.ok()) << b.status();
      SweepResult r = RunBackend(*b, 3, plan, op);
      if (std::string(name) == "gloo" && op == BenchOp::kReduceScatter) {
        EXPECT_EQ(r.status.code(), absl::StatusCode::kUnimplemented);
        EXPECT_THAT(FormatBackendTable(*b, 3, r, op),
                    HasSubstr("does not run reduce_scatter"));
        continue;
      }
      ASSERT_TRUE(r.status.ok()) << name << " " << BenchOpName(op) << ": "
                                 << r.status;
      ASSERT_EQ(r.sizes.size(), 2u);
      for (const SizeMeasurement& m : r.sizes) {
        EXPECT_EQ(m.wrong, 0) << name << " " << BenchOpName(op) << " "
                              << m.plan.bytes;
      }
      EXPECT_EQ(RowJson(name, 3, r.sizes[0], op)["op"], BenchOpName(op));
    }
  }
}

TEST(Sweep, UnknownBackendNamesTheKnownOnes) {
  absl::StatusOr<AllReduceBackend> b = MakeBackend("nccl", {});
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(std::string(b.status().message()), HasSubstr("ours,gloo,mpi"));
}

}  // namespace
}  // namespace ringside

// Measured collectives: nccl-tests' and collective_bench's printed tables
// parsed (ranks, nodes and the collective from the tools' own lines or a
// '# ringside:' line), bad rows refused naming the line and the field, the
// interpolation over sizes and rank counts, and the α-β line through two
// sizes.
#include "experiments/cost/measured_collectives.h"

#include <cmath>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringside {
namespace {

using ::testing::HasSubstr;

// nccl-tests' layout (13 columns: out-of-place and in-place), two ranks on
// two hosts, its own header lines.
constexpr char kNcclTests[] = R"(# nThread 1 nGpus 1 minBytes 8 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid  41211 on    node-a device  0 [0x07] NVIDIA A100-SXM4-80GB
#  Rank  1 Group  0 Pid  52310 on    node-b device  0 [0x07] NVIDIA A100-SXM4-80GB
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
        1024           256     float     sum      -1    20.00    0.05    0.05      0    10.00    0.10    0.10      0
     1048576        262144     float     sum      -1   110.00    9.53    9.53      0   100.00   10.49   10.49      0
  1073741824     268435456     float     sum      -1  90000.0   11.93   11.93      0  89478.5   12.00   12.00      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 7.5
)";

TEST(MeasuredCollectivesTest, ReadsNcclTestsOwnHeader) {
  absl::StatusOr<MeasuredCollectives> m =
      MeasuredCollectives::Parse(kNcclTests, "ib/all_reduce_perf.txt");
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->runs().size(), 1u);
  const CollectiveRun& r = m->runs()[0];
  EXPECT_EQ(r.op, CollectiveOp::kAllReduce);  // from the file's name
  EXPECT_EQ(r.ranks, 2);
  EXPECT_EQ(r.nodes, 2);
  ASSERT_EQ(r.points.size(), 3u);
  EXPECT_DOUBLE_EQ(r.points[0].seconds, 10e-6);  // the in-place time
  EXPECT_DOUBLE_EQ(r.points[2].bytes, 1073741824.0);
  // busbw at n = 2 is algbw: 1 GiB / 89478.5 us = 12.0 GB/s.
  EXPECT_NEAR(*m->BusBandwidth(CollectiveOp::kAllReduce, 2, 1073741824.0),
              12.0e9, 0.01e9);
  EXPECT_EQ(m->Summary(), "all_reduce at 2 ranks");
}

TEST(MeasuredCollectivesTest, InterpolatesLogLogWithinARun) {
  const MeasuredCollectives m =
      *MeasuredCollectives::Parse(kNcclTests, "all_reduce.txt");
  // Exactly at a measured size, its time.
  EXPECT_DOUBLE_EQ(*m.Seconds(CollectiveOp::kAllReduce, 2, 1048576), 100e-6);
  // Half-way in log size between 1 KiB (10 us) and 1 MiB (100 us): their
  // geometric mean.
  EXPECT_NEAR(*m.Seconds(CollectiveOp::kAllReduce, 2, 32768),
              std::sqrt(10e-6 * 100e-6), 1e-9);
  // Below the smallest size and above the largest, that size's bus
  // bandwidth.
  EXPECT_DOUBLE_EQ(*m.Seconds(CollectiveOp::kAllReduce, 2, 512), 5e-6);
  EXPECT_NEAR(*m.Seconds(CollectiveOp::kAllReduce, 2, 2147483648.0),
              2 * 89478.5e-6, 1e-9);
  EXPECT_FALSE(m.Seconds(CollectiveOp::kSendRecv, 2, 1024).has_value());
}

// Two runs given by '# ringside:' lines, older nccl-tests' layout without
// the root column (12 fields); busbw interpolated in log2(n) between them.
constexpr char kTwoRuns[] = R"(# link: infiniband
# source: a made-up table, for the test
# nominal_gbit: 200
# ringside: collective=all_reduce ranks=8 nodes=1
   1048576   262144   float   sum   70.0   14.98   26.21   0   70.0   14.98   26.21   0
 268435456 67108864   float   sum  2000.0 134.2  234.9   0   2000.0  134.2  234.9   0
# ringside: collective=all_reduce ranks=32 nodes=4
   1048576   262144   float   sum  200.0    5.24    10.16  0  200.0    5.24   10.16  0
 268435456 67108864   float   sum  10000.0 26.84   52.0   0  10000.0  26.84   52.0   0
)";

TEST(MeasuredCollectivesTest, InterpolatesAcrossRankCountsInLogN) {
  absl::StatusOr<MeasuredCollectives> m =
      MeasuredCollectives::Parse(kTwoRuns, "t.nccl");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->link(), "infiniband");
  EXPECT_DOUBLE_EQ(m->nominal_gbit(), 200);
  ASSERT_EQ(m->sources().size(), 1u);
  ASSERT_EQ(m->runs().size(), 2u);
  EXPECT_EQ(m->runs()[1].nodes, 4);
  const double s = 268435456.0;
  const double bw8 = 2.0 * 7 / 8 * s / 2000e-6;
  const double bw32 = 2.0 * 31 / 32 * s / 10000e-6;
  // n = 16 lies half-way between 8 and 32 in log2(n).
  EXPECT_NEAR(*m->BusBandwidth(CollectiveOp::kAllReduce, 16, s),
              (bw8 + bw32) / 2, 1e-6 * bw8);
  EXPECT_NEAR(*m->Seconds(CollectiveOp::kAllReduce, 16, s),
              2.0 * 15 / 16 * s / ((bw8 + bw32) / 2), 1e-12);
  // Outside the measured counts, the nearest run's bus bandwidth.
  EXPECT_NEAR(*m->BusBandwidth(CollectiveOp::kAllReduce, 64, s), bw32,
              1e-6 * bw32);
  EXPECT_NEAR(*m->BusBandwidth(CollectiveOp::kAllReduce, 2, s), bw8,
              1e-6 * bw8);
  // Scaling to a link twice as fast halves every time.
  MeasuredCollectives fast = *m;
  fast.ScaleBandwidth(2);
  EXPECT_NEAR(*fast.Seconds(CollectiveOp::kAllReduce, 8, s), 1000e-6, 1e-12);
}

TEST(MeasuredCollectivesTest, ReadsCollectiveBenchOutput) {
  constexpr char kBench[] = R"(# gloo: Gloo's allreduce_ring; allreduce, 4 ranks, in-place
#       size         count      type   redop       time    algbw    busbw  #wrong  iters
#        (B)    (elements)                         (us)   (GB/s)   (GB/s)
        4096          1024     float     sum       50.0    0.082    0.123       0    100
     4194304       1048576     float     sum     4000.0    1.049    1.573       0     20
# Avg bus bandwidth    : 0.848 GB/s
)";
  absl::StatusOr<MeasuredCollectives> m =
      MeasuredCollectives::Parse(kBench, "bench.txt");
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->runs().size(), 1u);
  EXPECT_EQ(m->runs()[0].op, CollectiveOp::kAllReduce);
  EXPECT_EQ(m->runs()[0].ranks, 4);
  EXPECT_DOUBLE_EQ(m->runs()[0].points[1].seconds, 4000e-6);
}

TEST(MeasuredCollectivesTest, BadFilesNameTheLineAndTheField) {
  struct Case {
    std::string text, message;
  };
  const std::string head = "# ringside: collective=all_reduce ranks=4\n";
  const std::string row =
      "1024 256 float sum -1 20.0 0.05 0.05 0 10.0 0.1 0.1 0\n";
  const Case cases[] = {
      {head + "1024 256 float sum -1 20.0 0.05 0.05 0 fast 0.1 0.1 0\n",
       "t.txt:2: field 'time': 'fast' is not a time in us > 0"},
      {head + "-5 256 float sum -1 20.0 0.05 0.05 0 10.0 0.1 0.1 0\n",
       "t.txt:2: field 'size': '-5' is not a number of bytes > 0"},
      {head + row + row, "t.txt:3: field 'size': 1024 is not above"},
      {head + "1024 256 float sum\n", "t.txt:2: row '1024 256 float sum': 4 "
                                      "fields, not a layout known"},
      {"# ringside: collective=broadcast ranks=4\n" + row,
       "t.txt:1: field 'collective': 'broadcast' is not"},
      {"# ringside: ranks=four\n" + row,
       "t.txt:1: field 'ranks': 'four' is not an integer"},
      {"# ringside: rank=4\n" + row, "t.txt:1: field 'rank': unknown"},
      {"# ringside: ranks=4\n" + row, "t.txt:2: field 'collective': cannot "
                                      "tell which collective"},
      {"# ringside: collective=all_reduce\n" + row,
       "t.txt:2: field 'ranks': cannot tell how many ranks"},
      {"# ringside: collective=all_reduce ranks=1\n" + row,
       "field 'ranks': a run at 1 rank measures no link"},
      {head + row + head + row, "t.txt:4: a second run of all_reduce at 4 "
                                "ranks (the first at t.txt:2)"},
      {"# nothing here\n", "t.txt: no rows of measured collectives"},
      {"# nominal_gbit: fast\n" + head + row,
       "t.txt:1: field 'nominal_gbit'"},
      {"# ringside: collective=all_reduce ranks=4 columns=size,count,time\n" +
           row,
       "13 fields where columns= names 3"},
  };
  for (const Case& c : cases) {
    const absl::Status s = MeasuredCollectives::Parse(c.text, "t.txt").status();
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << c.text << ": " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.message)) << c.text;
  }
  EXPECT_TRUE(absl::IsNotFound(
      MeasuredCollectives::Read("/nonexistent/all_reduce.txt").status()));
}

TEST(MeasuredCollectivesTest, ColumnsNameAnotherLayout) {
  absl::StatusOr<MeasuredCollectives> m = MeasuredCollectives::Parse(
      "# ringside: collective=sendrecv ranks=2 columns=size,time,busbw\n"
      "1000 5.0 0.2\n1000000 100.0 10.0\n",
      "t.txt");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->runs()[0].op, CollectiveOp::kSendRecv);
  EXPECT_DOUBLE_EQ(*m->BusBandwidth(CollectiveOp::kSendRecv, 2, 1e6), 1e10);
}

TEST(MeasuredCollectivesTest, MergeRefusesTheSameRunTwice) {
  MeasuredCollectives a = *MeasuredCollectives::Parse(kTwoRuns, "a.nccl");
  const MeasuredCollectives b =
      *MeasuredCollectives::Parse(kNcclTests, "all_reduce.txt");
  ASSERT_TRUE(a.Merge(b).ok());
  EXPECT_EQ(a.runs().size(), 3u);
  EXPECT_EQ(a.sources().size(), 1u);
  const absl::Status again = a.Merge(b);
  EXPECT_TRUE(absl::IsInvalidArgument(again));
  EXPECT_THAT(std::string(again.message()),
              HasSubstr("a second run of all_reduce at 2 ranks"));
}

// The α-β line through two sizes reproduces the measured times at both.
TEST(MeasuredCollectivesTest, FittedLinkPassesThroughBothSizes) {
  const MeasuredCollectives m =
      *MeasuredCollectives::Parse(kTwoRuns, "a.nccl");
  const double small = 1048576, large = 268435456;
  const std::optional<FittedLink> fit = FitAllReduceLink(m, 8, small, large);
  ASSERT_TRUE(fit.has_value());
  auto ring = [&](double s) {
    return 2.0 * 7 / 8 * s / fit->bandwidth_Bps + 2.0 * 7 * *fit->latency_s;
  };
  EXPECT_NEAR(ring(small), 70e-6, 1e-12);
  EXPECT_NEAR(ring(large), 2000e-6, 1e-12);
  EXPECT_GT(*fit->latency_s, 0);
  // One size: B from it alone, no latency.
  const std::optional<FittedLink> one = FitAllReduceLink(m, 8, large, large);
  EXPECT_DOUBLE_EQ(*one->latency_s, 0);
  EXPECT_NEAR(one->bandwidth_Bps, 2.0 * 7 / 8 * large / 2000e-6, 1);
  // A small size below every measured one: the table knows no latency.
  const std::optional<FittedLink> below =
      FitAllReduceLink(m, 8, 4096, large);
  EXPECT_FALSE(below->latency_s.has_value());
  EXPECT_NEAR(below->bandwidth_Bps, 2.0 * 7 / 8 * large / 2000e-6, 1);
  EXPECT_FALSE(FitAllReduceLink(m, 1, small, large).has_value());
}

}  // namespace
}  // namespace ringside

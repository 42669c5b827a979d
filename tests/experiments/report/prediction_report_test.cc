// PredictRuns / PredictionMarkdown / PredictionJson on hand-worked cases:
// a 2-worker ring of a 1 MB model in 10 tensors over a 1 GB/s link with
// α = 10 µs, one all-reduce per tensor (buckets off), and t_c = 20 ms:
// comm = 2(1/2)·1e6/1e9 + 10·2·1·1e-5 = 1 ms + 0.2 ms, so the predicted
// step is 21.2 ms; measured 26.5 ms → −20%.
#include "experiments/report/prediction_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/experiments/named_rows.h"

namespace ringside {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

ReportRow Measured(const std::string& strategy, int workers, int prm_srv,
                   double compute_s, double step_s) {
  ReportRow row = testing::NamedRow(strategy);
  row.prm_srv = prm_srv;
  row.utilization.assign(workers, compute_s / step_s);
  row.compute_step_s = compute_s;
  row.step_s = step_s;
  row.model_bytes = 1000000;
  row.num_tensors = 10;
  return row;
}

// PredictRuns on `rows` beside a baseline whose compute (and its CPU time)
// is the first row's: each row is predicted as if its compute were t_c.
std::vector<PredictedRun> PredictWithBaseline(std::vector<ReportRow> rows,
                                              const CostInputs& link) {
  ReportRow baseline = Measured("baseline", 1, 0, rows[0].compute_step_s,
                                rows[0].compute_step_s);
  baseline.compute_cpu_step_s = rows[0].compute_cpu_step_s;
  rows.push_back(baseline);
  std::vector<PredictedRun> runs = PredictRuns(rows, link);
  runs.pop_back();
  return runs;
}

CostInputs Link() {
  CostInputs link;
  link.bandwidth_Bps = 1e9;
  link.latency_s = 1e-5;
  link.bucket_bytes = 0;         // ring: one all-reduce per tensor
  link.ps_chunk_bytes = 125000;  // parameter servers: 2·n·C/B = n/4 ms
  return link;
}

TEST(PredictionReportTest, RingAgainstAHandWorkedStep) {
  const std::vector<PredictedRun> runs =
      PredictWithBaseline({Measured("ring", 2, 0, 0.020, 0.0265)}, Link());
  ASSERT_EQ(runs.size(), 1u);
  ASSERT_TRUE(runs[0].prediction.has_value()) << runs[0].why_not;
  EXPECT_NEAR(runs[0].prediction->step_s, 0.0212, 1e-12);
  ASSERT_TRUE(runs[0].error.has_value());
  EXPECT_NEAR(*runs[0].error, (0.0212 - 0.0265) / 0.0265, 1e-12);
  EXPECT_NEAR(runs[0].measured_utilization, 0.020 / 0.0265, 1e-12);
  EXPECT_EQ(runs[0].modelled_as, "ring");
}

// The baseline's gradients, ten of 0.1 MB ready every 1 ms up to 20 ms,
// overlap the ring's ten 0.12 ms all-reduces (0.1 ms of bytes + 20 µs of
// latency each) with backward: only the last, ready at 20 ms, is exposed:
// 20.12 ms. The explained prediction uses the ring row's own times.
TEST(PredictionReportTest, OverlapComesFromTheBaselinesReadyTimes) {
  ReportRow ring = Measured("ring", 2, 0, 0.020, 0.0205);
  ReportRow baseline = Measured("baseline", 1, 0, 0.020, 0.020);
  for (int k = 1; k <= 10; ++k) {
    baseline.gradient_ready.push_back({1e5, 0.011 + 0.001 * (k - 1)});
  }
  const std::vector<PredictedRun> runs = PredictRuns({ring, baseline}, Link());
  ASSERT_TRUE(runs[0].prediction.has_value()) << runs[0].why_not;
  EXPECT_NEAR(runs[0].prediction->step_s, 0.02012, 1e-9);
  EXPECT_NEAR(runs[0].prediction->backward_hidden_s, 0.00108, 1e-9);
  // The row reported no times of its own: its explained step hides none.
  ASSERT_TRUE(runs[0].explained.has_value());
  EXPECT_NEAR(runs[0].explained->step_s, 0.0212, 1e-9);
}

// sps with 4 workers: the server's link carries n·M = 4 MB → 4 ms + 2α,
// + the chunk pipeline's fill and drain, 2·n·C/B = 1 ms. dps with K = 4:
// max(M/B, n·M/(K·B)) = 1 ms + 2α + the same 1 ms (C ≤ M/K).
TEST(PredictionReportTest, ParameterServersUseTheRowsWorkersAndServers) {
  const std::vector<PredictedRun> runs =
      PredictWithBaseline({Measured("sps", 4, 1, 0.010, 0.020),
                   Measured("dps", 4, 4, 0.010, 0.020)},
                  Link());
  ASSERT_TRUE(runs[0].prediction && runs[1].prediction);
  EXPECT_NEAR(runs[0].prediction->step_s, 0.010 + 0.004 + 0.001 + 2e-5, 1e-12);
  EXPECT_NEAR(runs[1].prediction->step_s, 0.010 + 0.001 + 0.001 + 2e-5, 1e-12);
  EXPECT_EQ(runs[1].prediction->servers, 4);
}

// ring_fp16: one fp16 all-reduce per tensor, half the bytes: 2·(1/2)·0.5 MB
// over 1 GB/s = 0.5 ms and 10 tensors · 2·1·10 µs = 0.2 ms.
TEST(PredictionReportTest, RingFp16MovesHalfTheBytesPerTensor) {
  const std::vector<PredictedRun> runs =
      PredictWithBaseline({Measured("ring_fp16", 2, 0, 0.020, 0.025)}, Link());
  ASSERT_TRUE(runs[0].prediction.has_value());
  EXPECT_NEAR(runs[0].prediction->step_s, 0.0207, 1e-12);
  EXPECT_EQ(runs[0].modelled_as, "ring_fp16");
}

// Calibrated, ring_fp16 takes the fp16 all-reduce's CPU per byte and an
// all-reduce per tensor, ring the float32 one's and one per bucket:
// ring_fp16's 0.5 MB of halves at 1e-9 s/B is 0.5 ms, plus 10 all-reduces
// of 2 ring steps at 0.1 ms; ring's 1 MB at 1e-10 s/B is 0.1 ms, plus its
// 10 per-tensor all-reduces (Link: bucket_bytes 0).
TEST(PredictionReportTest, Fp16RowsUseTheFp16AllReducesCpuCost) {
  CostInputs link = Link();
  link.cpu.allreduce_byte_s = 1e-10;
  link.cpu.half_allreduce_byte_s = 1e-9;
  link.cpu.collective_step_s = 1e-4;
  const std::vector<PredictedRun> runs =
      PredictWithBaseline({Measured("ring_fp16", 2, 0, 0.020, 0.025),
                   Measured("ring", 2, 0, 0.020, 0.025)},
                  link);
  ASSERT_TRUE(runs[0].prediction && runs[1].prediction);
  EXPECT_NEAR(runs[0].prediction->cpu_s, 0.5e-3 + 2e-3, 1e-12);
  EXPECT_NEAR(runs[1].prediction->cpu_s, 0.1e-3 + 2e-3, 1e-12);
}

// A registry entry moving a fraction of the bytes as another's formula.
TEST(PredictionReportTest, WireFractionScalesTheBytesAndSaysSo) {
  ReportRow row = Measured("ring", 2, 0, 0.020, 0.025);
  row.wire_bytes_per_model_byte = 0.5;
  const std::vector<PredictedRun> runs = PredictWithBaseline({row}, Link());
  ASSERT_TRUE(runs[0].prediction.has_value());
  EXPECT_EQ(runs[0].modelled_as, "ring, M×0.5");
  EXPECT_NEAR(runs[0].prediction->bandwidth_s, 0.5e-3, 1e-12);
}

// A run's own bucket caps (its final record's ring_bucket_bytes) set b_r:
// Link() has one all-reduce per tensor (10 · 2·1 · 10 µs = 0.2 ms of
// latency at n = 2), a run with 25 MiB buckets reduces the 1 MB model in
// one (20 µs); both move 2·(1/2)·1 ms of bandwidth.
TEST(PredictionReportTest, ARunsOwnBucketCapsSetItsAllReduces) {
  ReportRow per_tensor = Measured("ring_fp16", 2, 0, 0.020, 0.025);
  per_tensor.ring_bucket_bytes = 0;
  ReportRow bucketed = Measured("ring_fp16", 2, 0, 0.020, 0.025);
  bucketed.ring_bucket_bytes = 25 << 20;
  bucketed.ring_first_bucket_bytes = 1 << 20;
  const std::vector<PredictedRun> runs =
      PredictWithBaseline({per_tensor, bucketed}, Link());
  ASSERT_TRUE(runs[0].prediction && runs[1].prediction);
  EXPECT_NEAR(runs[0].prediction->latency_s, 10 * 2 * 1e-5, 1e-12);
  EXPECT_NEAR(runs[1].prediction->latency_s, 2 * 1e-5, 1e-12);
  EXPECT_NEAR(runs[1].prediction->bandwidth_s, 0.0005, 1e-12);
}

// async_ps's staleness bound comes from its final record's "staleness"
// (else, an older record, its variant "τ=2"): its push+pull overlaps
// compute, so the step is max(t_c, comm); at τ=0 it is dps's.
TEST(PredictionReportTest, AsyncPsTakesItsStalenessFromTheRecord) {
  ReportRow stale = Measured("async_ps", 2, 4, 0.020, 0.025);
  stale.staleness = 2;
  ReportRow strict = Measured("async_ps", 2, 4, 0.020, 0.025);
  strict.staleness = 0;
  strict.variant = "τ=2";  // the record's field wins
  ReportRow older = Measured("async_ps", 2, 4, 0.020, 0.025);
  older.variant = "τ=2";
  const std::vector<PredictedRun> runs =
      PredictWithBaseline({stale, strict, older}, Link());
  ASSERT_TRUE(runs[0].prediction && runs[1].prediction && runs[2].prediction);
  // comm = max(1, 2/4)·1 ms + 2·10 µs + the pipeline's 2·2·C/B = 0.5 ms:
  // 1.52 ms < t_c = 20 ms, all hidden.
  EXPECT_NEAR(runs[0].prediction->step_s, 0.020, 1e-12);
  EXPECT_NEAR(runs[1].prediction->step_s, 0.02152, 1e-12);
  EXPECT_NEAR(runs[2].prediction->step_s, 0.020, 1e-12);
}

// A row's compute CPU time (the training thread's clock) is async_ps's
// t_c where it is below the wall time: comm 1.52 ms hides behind 12 ms,
// so the step is 12 ms; the report says so under the table. dps counts
// the wall time.
TEST(PredictionReportTest, AsyncPsCountsTheComputesCpuTimeAndSaysSo) {
  ReportRow async_ps = Measured("async_ps", 2, 4, 0.020, 0.025);
  async_ps.staleness = 2;
  async_ps.compute_cpu_step_s = 0.012;
  ReportRow dps = Measured("dps", 2, 4, 0.020, 0.025);
  dps.compute_cpu_step_s = 0.012;
  const std::vector<PredictedRun> runs = PredictWithBaseline({async_ps, dps}, Link());
  ASSERT_TRUE(runs[0].prediction && runs[1].prediction);
  EXPECT_NEAR(runs[0].prediction->step_s, 0.012, 1e-12);
  EXPECT_NEAR(runs[0].prediction->step_compute_s, 0.012, 1e-12);
  EXPECT_NEAR(runs[1].prediction->step_compute_s, 0.020, 1e-12);
  const std::string md = PredictionMarkdown(runs, Link(), "given");
  EXPECT_THAT(md, HasSubstr("- Async PS n=2: its predicted step counts "
                            "the compute's CPU time"));
  EXPECT_THAT(md, ::testing::Not(HasSubstr("- DPS n=2: its predicted")));
  EXPECT_THAT(md, ::testing::Not(HasSubstr("the cores' bound")));
  EXPECT_TRUE(
      PredictionJson(runs, Link(), "given")["runs"][0]["core_bound_s"]
          .is_null());
  // With the rounds' CPU calibrated against its K = 4 on 2 cores:
  // [2·(12 ms + 2·M·x) + M·(q_1 + q_w)] / 2 with M = 1 MB (Measured's),
  // x = 1 ns/B, q_1 = 10 ns/B, q_w = 8 ns/B: (2·14 + 18) / 2 = 23 ms.
  CostInputs cores = Link();
  cores.cpu.cores = 2;
  cores.cpu.ps_round_cpu_servers = 4;
  cores.cpu.ps_round_cpu_byte_s = 10e-9;
  cores.cpu.ps_round_cpu_worker_byte_s = 8e-9;
  cores.cpu.copy_byte_s = 1e-9;
  const std::vector<PredictedRun> bound = PredictWithBaseline({async_ps}, cores);
  ASSERT_TRUE(bound[0].prediction);
  EXPECT_NEAR(bound[0].prediction->step_s, 0.023, 1e-9);
  EXPECT_THAT(PredictionMarkdown(bound, cores, "given"),
              HasSubstr("- Async PS n=2: its predicted step is the cores' "
                        "bound"));
  EXPECT_NEAR(PredictionJson(bound, cores, "given")["runs"][0]["core_bound_s"]
                  .get<double>(),
              0.023, 1e-9);
}

// async_ps at τ = 2 with one warm-up step: step t waits for round t − 2,
// so its first measured step waited for none; the report says so beside
// the row (and in JSON). With warm-up ≥ τ, or no staleness, nothing.
TEST(PredictionReportTest, AsyncPsWarmedUpLessThanItsStalenessIsFlagged) {
  ReportRow short_warmup = Measured("async_ps", 2, 4, 0.020, 0.025);
  short_warmup.variant = "τ=2";
  short_warmup.warmup_steps = 1;
  ReportRow warmed = short_warmup;
  warmed.warmup_steps = 2;
  ReportRow dps = Measured("dps", 2, 4, 0.020, 0.025);
  dps.warmup_steps = 0;
  const std::vector<PredictedRun> runs =
      PredictWithBaseline({short_warmup, warmed, dps}, Link());
  EXPECT_THAT(runs[0].caveat,
              HasSubstr("its first 1 measured step(s) waited for no round "
                        "(warm-up 1 < τ = 2"));
  EXPECT_EQ(runs[1].caveat, "");
  EXPECT_EQ(runs[2].caveat, "");
  EXPECT_THAT(PredictionMarkdown(runs, Link(), "given"),
              HasSubstr("- Async PS n=2: its first 1 measured step(s)"));
  const nlohmann::json j = PredictionJson(runs, Link(), "given")["runs"];
  EXPECT_EQ(j[0]["caveat"].get<std::string>(),
            runs[0].caveat);
  EXPECT_TRUE(j[1]["caveat"].is_null());
}

// PowerSGD at --powersgd_start_step=8, measured from step 5 over 75 steps:
// steps 5–7 were ring's plain all-reduces, and the prediction is the
// window's mean of 3 ring steps and 72 compressed ones, said below the
// table and in JSON. A record without its window (an older one) gets the
// compressed step.
TEST(PredictionReportTest, PlainFirstStepsInTheWindowAreWeighedIn) {
  ReportRow powersgd = Measured("ring_powersgd", 2, 0, 0.020, 0.030);
  powersgd.strategy_options = {{"powersgd_start_step", "8"}};
  powersgd.warmup_steps = 5;
  powersgd.measured_steps = 75;
  ReportRow older = powersgd;
  older.measured_steps = 0;
  ReportRow ring = Measured("ring", 2, 0, 0.020, 0.030);
  const std::vector<PredictedRun> runs =
      PredictWithBaseline({powersgd, older, ring}, Link());
  ASSERT_TRUE(runs[0].prediction && runs[1].prediction && runs[2].prediction);
  const double own = runs[1].prediction->step_s;
  const double plain = runs[2].prediction->step_s;
  ASSERT_GT(plain, own);
  EXPECT_EQ(runs[0].plain_steps.steps, 3);
  EXPECT_NEAR(runs[0].plain_steps.plain_step_s, plain, 1e-12);
  EXPECT_NEAR(runs[0].prediction->step_s, (3 * plain + 72 * own) / 75,
              1e-12);
  EXPECT_EQ(runs[1].plain_steps.steps, 0);
  EXPECT_THAT(PredictionMarkdown(runs, Link(), "given"),
              HasSubstr("- Ring PowerSGD n=2: 3 of its measured steps were "
                        "plain ones (--powersgd_start_step), priced by "
                        "ring's formula"));
  const nlohmann::json j = PredictionJson(runs, Link(), "given")["runs"];
  EXPECT_EQ(j[0]["plain_steps_in_window"]["steps"].get<int>(), 3);
  EXPECT_EQ(j[0]["plain_steps_in_window"]["formula"].get<std::string>(),
            "ring");
  EXPECT_TRUE(j[1]["plain_steps_in_window"].is_null());
}

// hierarchical's ranks per host come from its final record (an older
// record's from its variant "h×r"): 4 workers as 2 hosts × 2 ranks: 2·(1/2)·1 ms + 2·(1/2)·1 ms of bandwidth (within the
// host, the reduce-scatter and all-gather; across, the shards' all-reduce)
// and 10·(2·1 + 2·1)·10 µs of latency = 2.4 ms; all four on one host
// (1×4): 2·(3/4)·1 ms + 10·(2·3)·10 µs = 2.1 ms.
TEST(PredictionReportTest, HierarchicalTakesItsRanksPerHostFromTheVariant) {
  ReportRow two_hosts = Measured("hierarchical", 4, 0, 0.020, 0.025);
  two_hosts.variant = "2×2";
  ReportRow one_host = Measured("hierarchical", 4, 0, 0.020, 0.025);
  one_host.variant = "1×4";
  const std::vector<PredictedRun> runs =
      PredictWithBaseline({two_hosts, one_host}, Link());
  ASSERT_TRUE(runs[0].prediction && runs[1].prediction);
  EXPECT_NEAR(runs[0].prediction->comm_s, 0.0024, 1e-12);
  EXPECT_NEAR(runs[1].prediction->comm_s, 0.0021, 1e-12);
  EXPECT_EQ(runs[0].modelled_as, "hierarchical");
  // The record's own count wins over the variant.
  ReportRow recorded = Measured("hierarchical", 4, 0, 0.020, 0.025);
  recorded.variant = "1×4";
  recorded.ranks_per_host = 2;
  const std::vector<PredictedRun> again =
      PredictWithBaseline({recorded}, Link());
  ASSERT_TRUE(again[0].prediction);
  EXPECT_NEAR(again[0].prediction->comm_s, 0.0024, 1e-12);
}

TEST(PredictionReportTest, UnmodelledAndIncompleteRunsSayWhy) {
  ReportRow old = Measured("ring", 2, 0, 0.02, 0.03);
  old.model_bytes = 0;  // records from a worker that did not report it
  const std::vector<PredictedRun> runs =
      PredictWithBaseline({Measured("my_strategy", 2, 0, 0.02, 0.03), old}, Link());
  EXPECT_FALSE(runs[0].prediction.has_value());
  EXPECT_EQ(runs[0].why_not, "not in the cost model");
  EXPECT_FALSE(runs[1].prediction.has_value());
  EXPECT_THAT(runs[1].why_not, HasSubstr("lack"));
  const std::string md = PredictionMarkdown(runs, Link(), "given");
  EXPECT_THAT(md, HasSubstr("- My_strategy n=2: no prediction (not in the "
                            "cost model)\n"));
  const nlohmann::json j = PredictionJson(runs, Link(), "given");
  EXPECT_TRUE(j["runs"][0]["predicted_step_s"].is_null());
  EXPECT_TRUE(j["runs"][0]["error"].is_null());
  EXPECT_EQ(j["runs"][0]["why_not"], "not in the cost model");
}

TEST(PredictionReportTest, MarkdownLinePerRunWithTheError) {
  const std::vector<PredictedRun> runs =
      PredictRuns({Measured("baseline", 1, 0, 0.020, 0.020),
                   Measured("ring", 2, 0, 0.020, 0.0265)},
                  Link());
  const std::string md = PredictionMarkdown(runs, Link(), "B given; α given");
  EXPECT_THAT(md, HasSubstr("B = 8.00 Gbit/s, α = 10.0 µs (B given; α "
                            "given)"));
  EXPECT_THAT(md, HasSubstr("| Predicted step (ms) | Measured step (ms) | "
                            "Error |"));
  // The baseline's step is t_c exactly.
  // The baseline is every row's t_c: its error is not counted (*).
  EXPECT_THAT(md, HasSubstr("| Baseline      |   1 |      0 |    baseline "
                            "|                   20.00 |               20.00 "
                            "|              20.00 | +0% * |            20.00 "
                            "|               20.00 |             +0% "
                            "|            100% |           100% "
                            "|                    0.00 |\n"));
  EXPECT_THAT(md, HasSubstr("| Ring          |   2 |      0 |        ring "
                            "|                   20.00 |               21.20 "
                            "|              26.50 |  -20% |            20.00 "
                            "|               21.20 |            -20% "
                            "|             94% |            75% "
                            "|                    6.50 |\n"));
  const nlohmann::json j = PredictionJson(runs, Link(), "given");
  EXPECT_DOUBLE_EQ(j["link"]["bandwidth_Bps"].get<double>(), 1e9);
  EXPECT_NEAR(j["runs"][1]["predicted_step_s"].get<double>(), 0.0212, 1e-12);
  EXPECT_NEAR(j["runs"][1]["error"].get<double>(), -0.2, 1e-12);
}

// The line under the table counts the strategy rows within 20% (the
// baseline aside) and names the others with their error.
TEST(PredictionReportTest, SummaryCountsTheRowsWithinTwentyPercent) {
  // ring n=4: 20 + 1.5 (2·3/4 · 1 ms) + 0.6 (10 · 6 · 10 µs) = 22.1 ms
  // predicted against 40 measured: −45%.
  const std::vector<PredictedRun> runs =
      PredictRuns({Measured("baseline", 1, 0, 0.020, 0.020),
                   Measured("ring", 2, 0, 0.020, 0.025),
                   Measured("ring", 4, 0, 0.020, 0.040)},
                  Link());
  const ErrorSummary summary = SummarizeErrors(runs);
  EXPECT_EQ(summary.modelled, 2);
  EXPECT_EQ(summary.within, 1);
  EXPECT_THAT(summary.outside, ElementsAre("Ring n=4 -45%"));
  EXPECT_THAT(PredictionMarkdown(runs, Link(), "given"),
              HasSubstr("Predicted within 20% of the measured step: 1 of 2 "
                        "counted rows (* and the list below: rows not "
                        "counted); outside: Ring n=4 -45%.\n"));
}

// Repeated runs (compare --repeats): the row is its median run, the table
// gives every row's fastest and slowest run and names the widest spread,
// and the JSON keeps every run's step.
TEST(PredictionReportTest, RepeatedRunsShowTheirRangeBesideTheMedianRun) {
  ReportRow ring = Measured("ring", 2, 0, 0.020, 0.0265);
  ring.run_step_s = {0.0300, 0.0265, 0.0250};
  ReportRow sps = Measured("sps", 2, 1, 0.020, 0.0300);
  sps.run_step_s = {0.0300, 0.0310, 0.0290};
  const std::vector<PredictedRun> runs = PredictRuns(
      {Measured("baseline", 1, 0, 0.020, 0.020), ring, sps}, Link());
  const std::string md = PredictionMarkdown(runs, Link(), "given");
  EXPECT_THAT(md, HasSubstr("| Measured step, median run (ms) | Runs: "
                            "fastest–slowest (ms) | Error |"));
  EXPECT_THAT(md, HasSubstr(" 26.50 |       25.00–30.00 (3 runs) |  -20% |"));
  EXPECT_THAT(md, HasSubstr(" 20.00 |                          - | +0% * |"));
  EXPECT_THAT(md, HasSubstr("| Baseline "));
  EXPECT_THAT(md, HasSubstr("The widest run-to-run spread: Ring n=2, its "
                            "slowest run 1.20× its fastest."));
  const nlohmann::json j = PredictionJson(runs, Link(), "given");
  EXPECT_TRUE(j["runs"][0]["measured_step_runs_s"].is_null());
  EXPECT_THAT(j["runs"][1]["measured_step_runs_s"].get<std::vector<double>>(),
              ElementsAre(0.0300, 0.0265, 0.0250));
}

// Each row is predicted from the baseline's compute, never its own: the
// ring row computed 26 ms a step in its run (its communication slowed its
// compute), the baseline 20 ms; predicted from 20 ms (21.2 ms, −24% of
// 28), explained from its own 26 ms (27.2 ms, −3%).
TEST(PredictionReportTest, RowsArePredictedFromTheBaselinesCompute) {
  const std::vector<PredictedRun> runs =
      PredictRuns({Measured("baseline", 1, 0, 0.020, 0.020),
                   Measured("ring", 2, 0, 0.026, 0.028)},
                  Link());
  ASSERT_TRUE(runs[1].prediction && runs[1].explained);
  EXPECT_DOUBLE_EQ(runs[1].compute_s, 0.020);
  EXPECT_EQ(runs[1].reference, "Baseline n=1");
  EXPECT_DOUBLE_EQ(runs[1].own_compute_s, 0.026);
  EXPECT_NEAR(runs[1].prediction->step_s, 0.0212, 1e-12);
  EXPECT_NEAR(*runs[1].error, (0.0212 - 0.028) / 0.028, 1e-12);
  EXPECT_NEAR(runs[1].explained->step_s, 0.0272, 1e-12);
  EXPECT_NEAR(*runs[1].explained_error, (0.0272 - 0.028) / 0.028, 1e-12);
  EXPECT_EQ(runs[1].not_counted, "");
  const nlohmann::json j = PredictionJson(runs, Link(), "given")["runs"][1];
  EXPECT_DOUBLE_EQ(j["compute_s"].get<double>(), 0.020);
  EXPECT_DOUBLE_EQ(j["own_compute_s"].get<double>(), 0.026);
  EXPECT_NEAR(j["explained_step_s"].get<double>(), 0.0272, 1e-12);
  EXPECT_TRUE(j["counted"].get<bool>());
  const std::string md = PredictionMarkdown(runs, Link(), "given");
  EXPECT_THAT(md, HasSubstr("| Own compute (ms) | Explained step (ms) | "
                            "Explained error |"));
  // The per-step overhead beside it, the same for ringside's rows and
  // PyTorch DDP's: measured step − own compute (28 − 26 ms).
  EXPECT_THAT(md, HasSubstr("| Step − own compute (ms) |"));
  EXPECT_THAT(md, HasSubstr("|                    2.00 |"));
  EXPECT_NEAR(j["overhead_s"].get<double>(), 0.002, 1e-12);
  EXPECT_THAT(md, HasSubstr("Predicted within 20% of the measured step: 0 "
                            "of 1 counted rows"));
  EXPECT_THAT(md, HasSubstr("Explained (each row's own compute) within 20% "
                            "of the measured step: 1 of 1 rows"));
}

// Without a baseline in the sweep there is nothing to predict from: no
// prediction, the reason, and still the explained step.
TEST(PredictionReportTest, NoReferenceRunNoPrediction) {
  const std::vector<PredictedRun> runs =
      PredictRuns({Measured("ring", 2, 0, 0.020, 0.0265)}, Link());
  EXPECT_FALSE(runs[0].prediction.has_value());
  EXPECT_THAT(runs[0].why_not,
              HasSubstr("no single-worker reference run (Baseline n=1)"));
  ASSERT_TRUE(runs[0].explained.has_value());
  EXPECT_NEAR(runs[0].explained->step_s, 0.0212, 1e-12);
  EXPECT_EQ(SummarizeErrors(runs).modelled, 0);
}

// Not counted: the reference itself, n = 1 rows the model gives no
// communication (they restate the baseline), real compute whose processes
// outnumber the cores. Emulated compute sleeps: not sharing cores.
TEST(PredictionReportTest, RowsThatRestateTheReferenceOrShareCoresAreNotCounted) {
  ReportRow sps = Measured("sps", 2, 1, 0.020, 0.030);  // 2 + 1 on 2 cores
  ReportRow threads = Measured("ring", 2, 0, 0.020, 0.0265);
  threads.compute_threads = 2;  // 2 × 2 on 2 cores
  ReportRow emulated = Measured("sps", 2, 1, 0.020, 0.030);
  emulated.emulated = true;
  const std::vector<PredictedRun> runs = PredictRuns(
      {Measured("baseline", 1, 0, 0.020, 0.020),
       Measured("ring", 1, 0, 0.020, 0.021), Measured("ring", 2, 0, 0.020,
                                                      0.0265),
       sps, threads, emulated},
      Link(), /*cores=*/2);
  EXPECT_THAT(runs[0].not_counted, HasSubstr("the reference run"));
  EXPECT_THAT(runs[1].not_counted,
              HasSubstr("n = 1 without communication"));
  EXPECT_EQ(runs[2].not_counted, "");
  EXPECT_THAT(runs[3].not_counted,
              HasSubstr("outside the model's domain: 2 worker(s) × 1 compute "
                        "thread(s) + 1 server(s) on 2 cores"));
  EXPECT_THAT(runs[4].not_counted,
              HasSubstr("2 worker(s) × 2 compute thread(s) + 0 server(s)"));
  EXPECT_EQ(runs[5].not_counted, "");
  const ErrorSummary summary = SummarizeErrors(runs);
  EXPECT_EQ(summary.modelled, 2);  // ring n=2, emulated sps
  const std::string md = PredictionMarkdown(runs, Link(), "given");
  EXPECT_THAT(md, HasSubstr("- SPS n=2: not counted (outside the model's "
                            "domain"));
  EXPECT_THAT(md, HasSubstr("- Ring n=1: not counted (n = 1 without"));
  // Unknown cores: nothing is outside the domain for them.
  EXPECT_EQ(PredictRuns({Measured("baseline", 1, 0, 0.02, 0.02), sps},
                        Link())[1]
                .not_counted,
            "");
}

// A row that emulated another compute (a faster precision) takes its t_c
// from the baseline that emulated the same; without one it has none and
// says so, rather than borrowing another compute's.
TEST(PredictionReportTest, EmulatedRowsTakeTheBaselineOfTheirOwnCompute) {
  auto emulated = [](const std::string& s, int n, double c, double step) {
    ReportRow r = Measured(s, n, 0, c, step);
    r.emulated = true;
    r.emulated_compute_s = c;
    return r;
  };
  const std::vector<PredictedRun> runs = PredictRuns(
      {emulated("baseline", 1, 0.200, 0.200),
       emulated("baseline", 1, 0.050, 0.050), emulated("ring", 2, 0.050, 0.060),
       emulated("ring", 2, 0.200, 0.210), emulated("ring", 2, 0.025, 0.030)},
      Link());
  EXPECT_NEAR(runs[2].compute_s, 0.050, 1e-12);
  EXPECT_NEAR(runs[3].compute_s, 0.200, 1e-12);
  EXPECT_FALSE(runs[4].prediction.has_value());
  EXPECT_THAT(runs[4].why_not,
              HasSubstr("no single-worker reference run (Baseline n=1 at 25.0 "
                        "ms of emulated compute)"));
}

// Core-bound rows are outside the model's domain too: with the machine's
// 2 cores calibrated, two workers' 20 ms of compute each keep the cores
// busy through the predicted step (their demand is at least 40 ms of CPU
// over a step of about 21 ms on 2 cores), so ring at n = 2 is not counted
// and says why; with 4 cores it keeps half of them busy and is counted.
TEST(PredictionReportTest, CoreBoundRowsAreNotCounted) {
  for (const int cores : {2, 4}) {
    SCOPED_TRACE(cores);
    CostInputs link = Link();
    link.cpu.cores = cores;
    const std::vector<PredictedRun> runs = PredictRuns(
        {Measured("baseline", 1, 0, 0.020, 0.020),
         Measured("ring", 2, 0, 0.020, 0.030)},
        link, cores);
    ASSERT_TRUE(runs[1].prediction.has_value());
    const double share = runs[1].prediction->core_share;
    if (cores == 2) {
      EXPECT_GE(share, kCoreBoundShare);
      EXPECT_THAT(runs[1].not_counted,
                  HasSubstr("outside the model's domain: core-bound, its "
                            "predicted CPU demand keeps"));
      EXPECT_THAT(runs[1].not_counted, HasSubstr("of the 2 cores busy"));
      EXPECT_EQ(SummarizeErrors(runs).modelled, 0);
      EXPECT_THAT(PredictionMarkdown(runs, link, "given"),
                  HasSubstr("- Ring n=2: not counted (outside the model's "
                            "domain: core-bound"));
    } else {
      EXPECT_LT(share, kCoreBoundShare);
      EXPECT_EQ(runs[1].not_counted, "");
      EXPECT_EQ(SummarizeErrors(runs).modelled, 1);
    }
  }
}

// Real compute whose communication runs during the compute, on workers
// whose compute threads fill the cores, is outside the model's domain:
// ring starts its calls in backward (the baseline's gradient-ready times
// say when), so at n = 2 on 2 cores it is not counted, nor is zero3; sps
// and zero1 start nothing before backward ends and stay counted, as does
// ring on 4 cores or beside emulated compute (which sleeps).
TEST(PredictionReportTest, CommunicationBesideComputeOnFullCoresIsNotCounted) {
  ReportRow baseline = Measured("baseline", 1, 0, 0.020, 0.020);
  for (int i = 0; i < 10; ++i) {
    baseline.gradient_ready.push_back({100000, 0.010 + 0.001 * i});
  }
  ReportRow emulated = Measured("ring", 2, 0, 0.020, 0.0265);
  emulated.emulated = true;
  for (const int cores : {2, 4}) {
    SCOPED_TRACE(cores);
    const std::vector<PredictedRun> runs = PredictRuns(
        {baseline, Measured("ring", 2, 0, 0.020, 0.0265),
         Measured("sps", 1, 1, 0.020, 0.030), emulated,
         Measured("zero3", 2, 0, 0.020, 0.030),
         Measured("zero1", 2, 0, 0.020, 0.030)},
        Link(), cores);
    ASSERT_TRUE(runs[1].prediction && runs[2].prediction &&
                runs[3].prediction && runs[4].prediction &&
                runs[5].prediction);
    EXPECT_TRUE(runs[1].prediction->communicates_during_compute);
    EXPECT_FALSE(runs[2].prediction->communicates_during_compute);
    // zero3 prefetches its all-gathers beside the compute though its
    // formula prices none of them as hidden; zero1 communicates after
    // backward.
    EXPECT_TRUE(runs[4].prediction->communicates_during_compute);
    EXPECT_FALSE(runs[5].prediction->communicates_during_compute);
    EXPECT_EQ(runs[4].not_counted.empty(), cores != 2);
    EXPECT_EQ(runs[5].not_counted, "");
    if (cores == 2) {
      EXPECT_THAT(runs[1].not_counted,
                  HasSubstr("outside the model's domain: its communication "
                            "runs during the compute while 2 worker(s) × 1 "
                            "compute thread(s) + 0 server(s) hold the 2 "
                            "cores"));
    } else {
      EXPECT_EQ(runs[1].not_counted, "");
    }
    EXPECT_EQ(runs[2].not_counted, "");
    EXPECT_EQ(runs[3].not_counted, "");
  }
}

// PyTorch DDP's rows take PyTorch's compute: the DDP run at n = 1.
TEST(PredictionReportTest, DdpRowsArePredictedFromDdpAtOneWorker) {
  ReportRow ddp1 = Measured("ddp", 1, 0, 0.025, 0.025);
  ddp1.modelled_as = "ring";
  ReportRow ddp2 = Measured("ddp", 2, 0, 0.030, 0.030);
  ddp2.modelled_as = "ring";
  const std::vector<PredictedRun> runs = PredictRuns(
      {Measured("baseline", 1, 0, 0.020, 0.020), ddp1, ddp2}, Link());
  ASSERT_TRUE(runs[2].prediction.has_value()) << runs[2].why_not;
  EXPECT_DOUBLE_EQ(runs[2].compute_s, 0.025);
  EXPECT_THAT(runs[2].reference, HasSubstr("n=1"));
  EXPECT_NEAR(runs[2].prediction->step_s, 0.0262, 1e-12);
  EXPECT_THAT(runs[1].not_counted, HasSubstr("the reference run"));
}

}  // namespace
}  // namespace ringside

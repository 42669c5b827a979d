// The cost model's input validation: bad inputs, unknown strategies and
// bad CPU costs are refused with INVALID_ARGUMENT naming what is wrong.
#include "experiments/cost/cost_model.h"

#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/experiments/cost/round_inputs.h"

namespace ringside {
namespace {

using ::testing::HasSubstr;

TEST(CostModelTest, RejectsBadInputWithInvalidArgument) {
  struct Case {
    const char* what;
    void (*breaks)(CostInputs&);
  };
  const Case cases[] = {
      {"workers", [](CostInputs& in) { in.workers = 0; }},
      {"workers", [](CostInputs& in) { in.workers = -3; }},
      {"servers", [](CostInputs& in) { in.servers = 0; }},
      {"bandwidth", [](CostInputs& in) { in.bandwidth_Bps = 0; }},
      {"bandwidth", [](CostInputs& in) { in.bandwidth_Bps = -1e9; }},
      {"bandwidth",
       [](CostInputs& in) {
         in.bandwidth_Bps = std::numeric_limits<double>::quiet_NaN();
       }},
      {"compute_s", [](CostInputs& in) { in.compute_s = 0; }},
      {"compute_s",
       [](CostInputs& in) {
         in.compute_s = std::numeric_limits<double>::infinity();
       }},
      {"model_bytes", [](CostInputs& in) { in.model_bytes = 0; }},
      {"num_tensors", [](CostInputs& in) { in.num_tensors = 0; }},
      {"latency", [](CostInputs& in) { in.latency_s = -1e-6; }},
      {"fusion_threshold_bytes",
       [](CostInputs& in) { in.fusion_threshold_bytes = -1; }},
      {"cycle_s", [](CostInputs& in) { in.cycle_s = -1; }},
      {"overlap", [](CostInputs& in) { in.overlap = 1.5; }},
      {"overlap", [](CostInputs& in) { in.overlap = -0.1; }},
      {"ranks_per_host", [](CostInputs& in) { in.ranks_per_host = -1; }},
      {"intra_bandwidth", [](CostInputs& in) { in.intra_bandwidth_Bps = -1; }},
      {"intra_latency",
       [](CostInputs& in) {
         in.intra_latency_s = std::numeric_limits<double>::quiet_NaN();
       }},
  };
  for (const Case& c : cases) {
    CostInputs in = Round();
    c.breaks(in);
    const absl::Status v = ValidateCostInputs(in);
    EXPECT_TRUE(absl::IsInvalidArgument(v)) << c.what << ": " << v;
    EXPECT_THAT(std::string(v.message()), HasSubstr(c.what));
    for (const std::string& s : CostModelStrategies()) {
      EXPECT_TRUE(absl::IsInvalidArgument(PredictStep(s, in).status()))
          << c.what << " " << s;
    }
  }
}

TEST(CostModelTest, RejectsUnknownStrategyListingTheKnownOnes) {
  const absl::Status s = PredictStep("allgather", Round()).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("allgather"));
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("baseline, sps, dps, ring, fusion"));
}

TEST(CostModelTest, RejectsNegativeOrInfiniteCpuCosts) {
  CostInputs in = Round();
  in.cpu.ps_server_byte_s = -1e-9;
  absl::StatusOr<Prediction> p = PredictStep("sps", in);
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(std::string(p.status().message()),
              HasSubstr("cpu.ps_server_byte_s must be >= 0"));
  in = Round();
  in.cpu.allreduce_byte_s = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(PredictStep("ring", in).ok());
  in = Round();
  in.cpu.cores = -1;
  EXPECT_FALSE(PredictStep("dps", in).ok());
}

}  // namespace
}  // namespace ringside

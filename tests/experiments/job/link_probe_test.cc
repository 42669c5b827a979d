// ProbeShapedLink: options out of range are refused by name; on real
// namespaces (root; skips with the reason elsewhere) the goodput both ways
// lies under the nominal rate, α is a plausible round trip, every round is
// kept, and the probe's namespaces are gone.
#include "experiments/job/link_probe.h"

#include <unistd.h>

#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace ringside {
namespace {

NetworkShape Shaped(double gbit) {
  NetworkShape shape;
  shape.link_gbit = gbit;
  return shape;
}

TEST(LinkProbeTest, RefusesWhatItCannotMeasure) {
  absl::StatusOr<LinkProbeResult> r = ProbeShapedLink(NetworkShape{});
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("--link_gbit > 0"), std::string::npos);

  LinkProbeOptions options;
  options.rounds = 0;
  r = ProbeShapedLink(Shaped(1), options);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("rounds"), std::string::npos);

  options = {};
  options.round_seconds = 0;
  r = ProbeShapedLink(Shaped(1), options);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("round_seconds"), std::string::npos);

  r = ProbeShapedLink(Shaped(-1));
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("--link_gbit"), std::string::npos);
}

// Namespaces named after this process ("rsnet-<pid>-...").
int OwnNamespaces() {
  int count = 0;
  std::error_code ec;
  const std::string prefix = absl::StrCat("rsnet-", getpid(), "-");
  for (const auto& entry :
       std::filesystem::directory_iterator("/run/netns", ec)) {
    if (entry.path().filename().string().rfind(prefix, 0) == 0) ++count;
  }
  return count;
}

TEST(LinkProbeTest, MeasuresBothWaysUnderTheNominalRate) {
  LinkProbeOptions options;
  options.round_seconds = 0.25;
  options.rounds = 3;
  options.pings = 20;
  options.timeout = absl::Seconds(10);
  absl::StatusOr<LinkProbeResult> r = ProbeShapedLink(Shaped(0.2), options);
  if (r.status().code() == absl::StatusCode::kFailedPrecondition) {
    GTEST_SKIP() << "network namespaces not permitted here: " << r.status();
  }
  ASSERT_TRUE(r.ok()) << r.status();
  const double line_Bps = 0.2e9 / 8;
  EXPECT_EQ(r->bytes_per_round, static_cast<int64_t>(line_Bps * 0.25));
  ASSERT_EQ(r->round_Bps.size(), 3u);
  // Unshaped veths would carry Gbit/s: the upper bound checks the shaping.
  // The lower, 10x under the rate, only catches a stalled link.
  for (double bps : r->round_Bps) {
    EXPECT_GT(bps, 0.1 * line_Bps);
    EXPECT_LT(bps, 1.02 * line_Bps);
  }
  EXPECT_GE(r->goodput_Bps,
            *std::min_element(r->round_Bps.begin(), r->round_Bps.end()));
  EXPECT_LE(r->goodput_Bps,
            *std::max_element(r->round_Bps.begin(), r->round_Bps.end()));
  EXPECT_GT(r->latency_s, 0.25e-6);
  EXPECT_LT(r->latency_s, 5e-3);
  // The machine's CPU per byte moved, through the link and on loopback:
  // a few ns here (at 10 ms ticks over 0.75 s and 0.5 s of rounds).
  EXPECT_GT(r->cpu_byte_s, 0);
  EXPECT_LT(r->cpu_byte_s, 1e-6);
  EXPECT_GT(r->loopback_cpu_byte_s, 0);
  EXPECT_LT(r->loopback_cpu_byte_s, 1e-6);
  EXPECT_EQ(OwnNamespaces(), 0);
}

}  // namespace
}  // namespace ringside

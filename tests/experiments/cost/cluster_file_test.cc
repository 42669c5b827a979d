// Cluster files: parsing, the refusal of a malformed file naming the line
// and the field, the links a job of n uses, and the compute taken from a
// compare run's JSON.
#include "experiments/cost/cluster_file.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringside {
namespace {

using ::testing::HasSubstr;

constexpr char kGood[] = R"(# two nodes of four
nodes = 2
gpus_per_node = 4
intra_node_gbit = 800     # NVLink-ish
intra_node_latency_us = 2
inter_node_gbit = 80
inter_node_latency_us = 10

compute_ms = 50
model_bytes = 1000000
tensors = 10
batch_size = 16
)";

TEST(ClusterFileTest, ParsesEveryField) {
  absl::StatusOr<ClusterSpec> c = ParseClusterFile(kGood, "c.cluster");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->nodes, 2);
  EXPECT_EQ(c->gpus_per_node, 4);
  EXPECT_EQ(c->gpus(), 8);
  EXPECT_DOUBLE_EQ(c->intra_node_gbit, 800);
  EXPECT_DOUBLE_EQ(c->inter_node_latency_us, 10);
  EXPECT_DOUBLE_EQ(c->compute_ms, 50);
  EXPECT_EQ(c->model_bytes, 1000000);
  EXPECT_EQ(c->tensors, 10);
  EXPECT_EQ(c->batch_size, 16);
  EXPECT_EQ(c->servers, 0);  // nodes, in ClusterInputs
}

TEST(ClusterFileTest, MalformedFilesNameTheLineAndTheField) {
  struct Case {
    std::string replace, with, message;
  };
  const Case cases[] = {
      {"nodes = 2", "nodes = two", "c.cluster:2: field 'nodes': 'two' is not"},
      {"nodes = 2", "nodes = 0", "c.cluster:2: field 'nodes': 0 is below 1"},
      {"inter_node_gbit = 80", "inter_node_gbit = -1",
       "c.cluster:6: field 'inter_node_gbit': -1 must be > 0"},
      {"batch_size = 16", "batch_sz = 16",
       "c.cluster:12: field 'batch_sz': unknown"},
      {"batch_size = 16", "batch_size 16",
       "c.cluster:12: 'batch_size 16' is not KEY = VALUE"},
      {"batch_size = 16", "nodes = 3",
       "c.cluster:12: field 'nodes': given twice"},
      {"compute_ms = 50", "", "exactly one of compute_ms and compute_from"},
      {"tensors = 10", "profile = resnet50",
       "either profile or both model_bytes and tensors"},
      {"gpus_per_node = 4", "", "field 'gpus_per_node' is missing"},
      {"batch_size = 16", "servers_per_node = 0",
       "'servers_per_node' and 'server_hosts' are both 0"},
      {"batch_size = 16", "server_hosts = -2",
       "c.cluster:12: field 'server_hosts': -2 is below 0"},
  };
  for (const Case& c : cases) {
    std::string text = kGood;
    text.replace(text.find(c.replace), c.replace.size(), c.with);
    const absl::Status s = ParseClusterFile(text, "c.cluster").status();
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << c.with << ": " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.message)) << c.with;
  }
}

// n <= GPUs per node stays on one node's link; beyond, the inter-node one;
// hierarchical always sees both.
TEST(ClusterFileTest, JobsUseTheLinkOfTheirPlacement) {
  const ClusterSpec c = *ParseClusterFile(kGood, "c.cluster");
  const CostInputs four = ClusterInputs(c, CostInputs(), 4);
  EXPECT_DOUBLE_EQ(four.bandwidth_Bps, 800e9 / 8);
  EXPECT_DOUBLE_EQ(four.latency_s, 2e-6);
  const CostInputs eight = ClusterInputs(c, CostInputs(), 8);
  EXPECT_DOUBLE_EQ(eight.bandwidth_Bps, 80e9 / 8);
  EXPECT_DOUBLE_EQ(eight.latency_s, 10e-6);
  EXPECT_EQ(eight.ranks_per_host, 4);
  EXPECT_DOUBLE_EQ(eight.intra_bandwidth_Bps, 800e9 / 8);
  EXPECT_EQ(eight.servers, 2);  // K = nodes by default
  EXPECT_DOUBLE_EQ(eight.compute_s, 0.05);
  EXPECT_EQ(eight.workers, 8);
  // byteps's summation servers: one on each node by default.
  EXPECT_EQ(eight.servers_per_host, 1);
  EXPECT_EQ(eight.server_hosts, 0);
  std::string own_hosts = kGood;
  own_hosts += "servers_per_node = 0\nserver_hosts = 3\n";
  const CostInputs apart =
      ClusterInputs(*ParseClusterFile(own_hosts, "c.cluster"), CostInputs(), 8);
  EXPECT_EQ(apart.servers_per_host, 0);
  EXPECT_EQ(apart.server_hosts, 3);
}

// σ defaults to the published measurement and says so; a file's own σ and
// f are taken as given; beyond one node a host's workers share its link.
TEST(ClusterFileTest, FrameworkTermsAndTheSharedHostLink) {
  const ClusterSpec c = *ParseClusterFile(kGood, "c.cluster");
  EXPECT_DOUBLE_EQ(ClusterInputs(c, CostInputs(), 8).compute_slowdown,
                   kPublishedComputeSlowdown);
  EXPECT_THAT(c.FrameworkTermsDescription(), HasSubstr("arXiv 2507.03114"));
  EXPECT_THAT(c.FrameworkTermsDescription(), HasSubstr("not priced"));
  EXPECT_EQ(ClusterInputs(c, CostInputs(), 4).workers_per_link, 1);
  EXPECT_EQ(ClusterInputs(c, CostInputs(), 8).workers_per_link, 4);
  std::string measured = kGood;
  measured += "compute_slowdown = 0.05\nsync_fixed_ms = 1.5\n";
  const ClusterSpec m = *ParseClusterFile(measured, "c.cluster");
  const CostInputs in = ClusterInputs(m, CostInputs(), 8);
  EXPECT_DOUBLE_EQ(in.compute_slowdown, 0.05);
  EXPECT_DOUBLE_EQ(in.sync_fixed_s, 1.5e-3);
  EXPECT_THAT(m.FrameworkTermsDescription(),
              HasSubstr("5.0% (given in the cluster file)"));
}

TEST(ClusterFileTest, ComputeFromACompareRun) {
  const std::string dir = std::getenv("TEST_TMPDIR");
  {
    std::ofstream json(dir + "/compare.json");
    json << R"({"cost_model": {"runs": [
      {"strategy": "ring", "workers": 4, "compute_s": 0.030},
      {"strategy": "ring", "workers": 2, "compute_s": 0.020},
      {"strategy": "sps", "workers": 2, "compute_s": 0.040}]}})";
  }
  EXPECT_DOUBLE_EQ(*ComputeFromCompareJson(dir + "/compare.json", "ring"), 20);
  const absl::Status none =
      ComputeFromCompareJson(dir + "/compare.json", "dps").status();
  EXPECT_TRUE(absl::IsNotFound(none)) << none;
  EXPECT_THAT(std::string(none.message()), HasSubstr("runs: ring, sps"));
  // A cluster file naming it, relative to the file's folder.
  std::string text = kGood;
  text.replace(text.find("compute_ms = 50"), 15,
               "compute_from = compare.json:sps");
  {
    std::ofstream file(dir + "/from.cluster");
    file << text;
  }
  absl::StatusOr<ClusterSpec> c = ReadClusterFile(dir + "/from.cluster");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_DOUBLE_EQ(c->compute_ms, 40);
  EXPECT_TRUE(absl::IsNotFound(ReadClusterFile(dir + "/none").status()));
}


// Measured collectives of a link: B and α at n ranks are the α-β line
// through the all-reduce's times at ring's two bucket sizes; the other
// link stays nominal; both keys of one link, an unparsable table and an
// unknown built-in name are refused naming the field.
TEST(ClusterFileTest, MeasuredCollectivesPriceTheirLink) {
  const std::string dir = std::getenv("TEST_TMPDIR");
  {
    std::ofstream table(dir + "/ib.txt");
    table << "# link: infiniband\n"
             "# ringside: collective=all_reduce ranks=8 nodes=2\n"
             "1048576 262144 float sum -1 90 0 0 0 100.0 0 0 0\n"
             "26214400 6553600 float sum -1 1900 0 0 0 2000.0 0 0 0\n";
  }
  std::string text = kGood;
  text += "inter_node_collectives = ib.txt\n";
  {
    std::ofstream file(dir + "/m.cluster");
    file << text;
  }
  absl::StatusOr<ClusterSpec> c = ReadClusterFile(dir + "/m.cluster");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(c->inter_node.description,
              HasSubstr("measured: ib.txt (all_reduce at 8 ranks)"));
  EXPECT_THAT(c->intra_node.description, HasSubstr("nominal 800 Gbit/s"));
  CostInputs base;
  base.model_bytes = 1e9;  // the buckets at their 1 MiB and 25 MiB
  base.bucket_bytes = 26214400;
  base.first_bucket_bytes = 1048576;
  const CostInputs eight = ClusterInputs(*c, base, 8);
  auto ring = [&](double s) {
    return 2.0 * 7 / 8 * s / eight.bandwidth_Bps + 2.0 * 7 * eight.latency_s;
  };
  EXPECT_NEAR(ring(1048576), 100e-6, 1e-12);
  EXPECT_NEAR(ring(26214400), 2000e-6, 1e-12);
  // Within a node, the nominal intra-node link.
  const CostInputs four = ClusterInputs(*c, base, 4);
  EXPECT_DOUBLE_EQ(four.bandwidth_Bps, 800e9 / 8);
  EXPECT_DOUBLE_EQ(eight.intra_bandwidth_Bps, 800e9 / 8);

  struct Case {
    std::string lines, message;
  };
  {
    std::ofstream bad(dir + "/bad.txt");
    bad << "# ringside: collective=all_reduce ranks=8\n1024 1 float\n";
    std::ofstream gather(dir + "/gather.txt");
    gather << "# ringside: collective=all_gather ranks=8\n"
              "1024 256 float none -1 9 0 0 0 10.0 0 0 0\n";
  }
  const Case cases[] = {
      {"inter_node_collectives = ib.txt\ninter_node_link = tcp\n",
       "field 'inter_node_link': give one of inter_node_collectives and "
       "inter_node_link, not both"},
      {"inter_node_collectives = bad.txt\n",
       "field 'inter_node_collectives': " + dir + "/bad.txt:2: row"},
      {"inter_node_collectives = gone.txt\n",
       "field 'inter_node_collectives': cannot read"},
      {"intra_node_collectives = gather.txt\n",
       "field 'intra_node_collectives': no all_reduce run"},
      {"intra_node_link = carrier_pigeon\n",
       "field 'intra_node_link': 'carrier_pigeon' is neither"},
  };
  for (const Case& k : cases) {
    {
      std::ofstream file(dir + "/k.cluster");
      file << kGood << k.lines;
    }
    const absl::Status s = ReadClusterFile(dir + "/k.cluster").status();
    EXPECT_FALSE(s.ok()) << k.lines;
    EXPECT_THAT(std::string(s.message()), HasSubstr(k.message)) << k.lines;
  }
}

// A link type names its default built-in table, scaled from the table's
// nominal rate to the cluster's.
TEST(ClusterFileTest, ALinkTypeScalesItsBuiltInTable) {
  std::string text = kGood;
  text += "inter_node_link = infiniband\n";
  absl::StatusOr<ClusterSpec> c = ParseClusterFile(text, "c.cluster");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(ResolveLinkPricing(*c).ok());
  EXPECT_THAT(c->inter_node.description, HasSubstr("built-in "));
  EXPECT_THAT(c->inter_node.description, HasSubstr("to 80 Gbit/s"));
  ASSERT_NE(c->inter_node.measured, nullptr);
  // Twice the nominal rate: every measured time halves, so B doubles.
  ClusterSpec twice = *ParseClusterFile(text, "c.cluster");
  twice.inter_node_gbit = 160;
  ASSERT_TRUE(ResolveLinkPricing(twice).ok());
  CostInputs base;
  base.model_bytes = 1e8;
  EXPECT_NEAR(ClusterInputs(twice, base, 8).bandwidth_Bps,
              2 * ClusterInputs(*c, base, 8).bandwidth_Bps,
              1e-6 * ClusterInputs(*c, base, 8).bandwidth_Bps);
}

}  // namespace
}  // namespace ringside

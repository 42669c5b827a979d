// NetnsTopology without privileges: flag validation, the generated ip/tc
// commands, failure handling and JobNetwork placement, through a fake
// command runner.
#include "experiments/job/netns_topology.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringside {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

NetworkShape Shape(double gbit, double latency_us) {
  NetworkShape s;
  s.link_gbit = gbit;
  s.link_latency_us = latency_us;
  return s;
}

TEST(NetworkShapeTest, AcceptsOffAndSaneLinks) {
  EXPECT_TRUE(NetworkShape().Validate().ok());
  EXPECT_FALSE(NetworkShape().enabled());
  EXPECT_TRUE(Shape(10, 50).Validate().ok());
  EXPECT_TRUE(Shape(0.1, 0).Validate().ok());
  EXPECT_TRUE(Shape(1000, 1e7).Validate().ok());
  EXPECT_TRUE(Shape(1, 0).enabled());
}

TEST(NetworkShapeTest, RejectsBadValuesNamingTheFlag) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (const NetworkShape& s : {Shape(-1, 0), Shape(nan, 0), Shape(inf, 0),
                                Shape(1e-9, 0), Shape(1001, 0)}) {
    const absl::Status status = s.Validate();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << s.link_gbit;
    EXPECT_THAT(std::string(status.message()), HasSubstr("--link_gbit"));
  }
  for (const NetworkShape& s :
       {Shape(1, -1), Shape(1, nan), Shape(1, inf), Shape(1, 2e7)}) {
    const absl::Status status = s.Validate();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << s.link_latency_us;
    EXPECT_THAT(std::string(status.message()), HasSubstr("--link_latency_us"));
  }
  // Latency alone would need the namespaces that only bandwidth turns on.
  const absl::Status status = Shape(0, 50).Validate();
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_THAT(std::string(status.message()), HasSubstr("needs --link_gbit"));
}

TEST(NetworkShapeTest, Describes) {
  EXPECT_EQ(Shape(1, 50).Describe(), "1 Gbit/s links, 50 us latency, TCP reno");
  EXPECT_EQ(Shape(10, 0).Describe(),
            "10 Gbit/s links, no added latency, TCP reno");
  NetworkShape host = Shape(0.1, 2.5);
  host.tcp_congestion = "host";
  EXPECT_EQ(host.Describe(),
            "0.1 Gbit/s links, 2.5 us latency, TCP as the host's");
}

// An emulated run at scale S: the links are shaped at link_gbit, which
// stands for S times that; the scale needs shaped links and is >= 1.
TEST(NetworkShapeTest, EmulationScaleNeedsShapedLinksAndIsDescribed) {
  NetworkShape scaled = Shape(0.015625, 0);
  scaled.emulation_scale = 64;
  ASSERT_TRUE(scaled.Validate().ok());
  EXPECT_DOUBLE_EQ(scaled.represented_gbit(), 1.0);
  EXPECT_EQ(scaled.Describe(),
            "0.015625 Gbit/s links (standing for 1 Gbit/s at emulation scale "
            "64), no added latency, TCP reno");
  NetworkShape loopback;
  loopback.emulation_scale = 64;
  EXPECT_THAT(std::string(loopback.Validate().message()),
              HasSubstr("--emulation_scale=64 needs shaped links"));
  for (const double bad : {0.5, -1.0, std::nan("")}) {
    NetworkShape s = Shape(1, 0);
    s.emulation_scale = bad;
    EXPECT_TRUE(absl::IsInvalidArgument(s.Validate())) << bad;
  }
}

TEST(NetworkShapeTest, RejectsABadCongestionControlName) {
  for (const char* bad : {"", "Cubic", "cubic;rm", "a_name_far_too_long"}) {
    NetworkShape s = Shape(1, 0);
    s.tcp_congestion = bad;
    const absl::Status status = s.Validate();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << bad;
    EXPECT_THAT(std::string(status.message()),
                HasSubstr("--link_tcp_congestion"));
  }
  NetworkShape ok = Shape(1, 0);
  for (const char* name : {"reno", "cubic", "bbr", "host"}) {
    ok.tcp_congestion = name;
    EXPECT_TRUE(ok.Validate().ok()) << name;
  }
}

NetnsTopologyOptions Options(NetworkShape shape,
                             std::vector<std::string> endpoints) {
  NetnsTopologyOptions o;
  o.shape = shape;
  o.endpoints = std::move(endpoints);
  o.ip = "ip";
  o.tc = "tc";
  o.sysctl = "sysctl";
  o.name_prefix = "rsnet-42-0";
  return o;
}

std::vector<std::string> Joined(const NetnsPlan& plan) {
  std::vector<std::string> lines;
  for (const NetnsCommand& c : plan.setup) {
    lines.push_back(absl::StrJoin(c.argv, " "));
  }
  return lines;
}

bool Contains(const std::vector<std::string>& lines, const std::string& line) {
  for (const std::string& l : lines) {
    if (l == line) return true;
  }
  return false;
}

TEST(PlanNetnsTest, OneNamespacePerEndpointBehindABridge) {
  absl::StatusOr<NetnsPlan> plan =
      PlanNetns(Options(Shape(1, 50), {"s0", "w0", "w1"}));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(plan->namespaces, ElementsAre("rsnet-42-0-hub", "rsnet-42-0-s0",
                                            "rsnet-42-0-w0", "rsnet-42-0-w1"));
  EXPECT_THAT(plan->addresses,
              ElementsAre("10.77.0.2", "10.77.0.3", "10.77.0.4"));
  const std::vector<std::string> lines = Joined(*plan);
  EXPECT_EQ(lines[0], "ip netns add rsnet-42-0-hub");
  for (const char* want : {
           "ip -n rsnet-42-0-hub link add br0 type bridge",
           "ip -n rsnet-42-0-hub link set dev br0 up",
           "ip netns add rsnet-42-0-w0",
           "ip -n rsnet-42-0-w0 link set dev lo up",
           // Every endpoint's TCP: reno unless asked otherwise.
           "ip netns exec rsnet-42-0-w0 sysctl -q -w "
           "net.ipv4.tcp_congestion_control=reno",
           "ip link add eth0 netns rsnet-42-0-w0 type veth peer name w0 "
           "netns rsnet-42-0-hub",
           "ip -n rsnet-42-0-w0 addr add 10.77.0.3/24 dev eth0",
           "ip -n rsnet-42-0-w0 link set dev eth0 up",
           "ip -n rsnet-42-0-hub link set dev w0 master br0",
           "ip -n rsnet-42-0-hub link set dev w0 up",
           // Upload: the endpoint's eth0; download: its port on the hub.
           // Packets of a quarter of a millisecond of line rate.
           "ip -n rsnet-42-0-w0 link set dev eth0 gso_max_size 31250",
           "tc -n rsnet-42-0-w0 qdisc add dev eth0 root handle 1: htb "
           "default 1",
           "tc -n rsnet-42-0-w0 class add dev eth0 parent 1: classid 1:1 htb "
           "rate 1000000000bit ceil 1000000000bit burst 62500 cburst 62500 "
           "quantum 60000",
           "tc -n rsnet-42-0-w0 qdisc add dev eth0 parent 1:1 handle 10: "
           "netem delay 25us limit 100000",
           "tc -n rsnet-42-0-hub qdisc add dev w0 root handle 1: htb default 1",
           "tc -n rsnet-42-0-hub qdisc add dev w0 parent 1:1 handle 10: netem "
           "delay 25us limit 100000",
       }) {
    EXPECT_TRUE(Contains(lines, want)) << "missing: " << want;
  }
  // Each namespace is created by exactly one command that says so.
  std::vector<int> creates;
  int netem = 0;
  for (const NetnsCommand& c : plan->setup) {
    if (c.creates >= 0) creates.push_back(c.creates);
    EXPECT_EQ(c.creates >= 0, c.argv[1] == "netns" && c.argv[2] == "add");
    EXPECT_EQ(c.latency,
              absl::StrContains(absl::StrJoin(c.argv, " "), "netem"));
    netem += c.latency;
  }
  EXPECT_THAT(creates, ElementsAre(0, 1, 2, 3));
  EXPECT_EQ(netem, 6);  // two egresses per link
}

TEST(PlanNetnsTest, SetsTheAskedCongestionControlOrLeavesTheHosts) {
  NetworkShape cubic = Shape(1, 0);
  cubic.tcp_congestion = "cubic";
  absl::StatusOr<NetnsPlan> plan = PlanNetns(Options(cubic, {"s0", "w0"}));
  ASSERT_TRUE(plan.ok()) << plan.status();
  int set = 0;
  for (const std::string& line : Joined(*plan)) {
    set += absl::StrContains(line, "net.ipv4.tcp_congestion_control=cubic");
  }
  EXPECT_EQ(set, 2);  // each endpoint; the hub has no sockets
  NetworkShape host = Shape(1, 0);
  host.tcp_congestion = "host";
  NetnsTopologyOptions o = Options(host, {"w0"});
  o.sysctl.clear();  // not needed then
  plan = PlanNetns(o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  for (const std::string& line : Joined(*plan)) {
    EXPECT_THAT(line, ::testing::Not(HasSubstr("sysctl")));
  }
  o.shape = Shape(1, 0);
  EXPECT_TRUE(absl::IsInvalidArgument(PlanNetns(o).status()));
}

TEST(PlanNetnsTest, NoNetemWithoutLatencyAndSmallPacketsAtLowRates) {
  absl::StatusOr<NetnsPlan> plan = PlanNetns(Options(Shape(0.1, 0), {"w0"}));
  ASSERT_TRUE(plan.ok()) << plan.status();
  for (const std::string& line : Joined(*plan)) {
    EXPECT_THAT(line, ::testing::Not(HasSubstr("netem")));
  }
  EXPECT_TRUE(Contains(Joined(*plan),
                       "tc -n rsnet-42-0-w0 class add dev eth0 parent 1: "
                       "classid 1:1 htb rate 100000000bit ceil 100000000bit "
                       "burst 12288 cburst 12288 quantum 60000"));
  // Packets of a quarter of a millisecond of line rate, at least 12 KiB:
  // htb bursts no more than one of them here.
  EXPECT_TRUE(Contains(Joined(*plan),
                       "ip -n rsnet-42-0-w0 link set dev eth0 gso_max_size "
                       "12288"));
  EXPECT_TRUE(Contains(Joined(*plan),
                       "ip -n rsnet-42-0-hub link set dev w0 gso_max_size "
                       "12288"));
}

TEST(PlanNetnsTest, RejectsBadOptions) {
  EXPECT_TRUE(absl::IsInvalidArgument(
      PlanNetns(Options(Shape(0, 0), {"w0"})).status()));  // not enabled
  EXPECT_TRUE(
      absl::IsInvalidArgument(PlanNetns(Options(Shape(1, 0), {})).status()));
  for (const char* bad : {"", "hub", "br0", "lo", "W0", "w-0", "abcdefghi"}) {
    EXPECT_TRUE(absl::IsInvalidArgument(
        PlanNetns(Options(Shape(1, 0), {bad})).status()))
        << bad;
  }
  EXPECT_TRUE(absl::IsInvalidArgument(
      PlanNetns(Options(Shape(1, 0), {"w0", "w0"})).status()));
  std::vector<std::string> many;
  for (int i = 0; i < 254; ++i) many.push_back("w" + std::to_string(i));
  EXPECT_TRUE(
      absl::IsInvalidArgument(PlanNetns(Options(Shape(1, 0), many)).status()));
  many.pop_back();
  absl::StatusOr<NetnsPlan> full = PlanNetns(Options(Shape(1, 0), many));
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->addresses.back(), "10.77.0.254");
  for (const char* subnet : {"10.77", "10.77.0.0", "10.300.0", "a.b.c"}) {
    NetnsTopologyOptions o = Options(Shape(1, 0), {"w0"});
    o.subnet = subnet;
    EXPECT_TRUE(absl::IsInvalidArgument(PlanNetns(o).status())) << subnet;
  }
  NetnsTopologyOptions o = Options(Shape(1, 0), {"w0"});
  o.name_prefix = "a b";
  EXPECT_TRUE(absl::IsInvalidArgument(PlanNetns(o).status()));
}

// Records every command; fails those containing `fail_on`.
struct FakeRunner {
  std::vector<std::string> commands;
  std::string fail_on;
  std::string error = "Error: boom";

  NetnsCommandRunner Runner() {
    return [this](const std::vector<std::string>& argv) {
      const std::string line = absl::StrJoin(argv, " ");
      commands.push_back(line);
      if (!fail_on.empty() && absl::StrContains(line, fail_on)) {
        return absl::InternalError(absl::StrCat(line,
                                                " exited with code 2; "
                                                "last stderr lines:\n  ",
                                                error));
      }
      return absl::OkStatus();
    };
  }
  std::vector<std::string> Deletes() const {
    std::vector<std::string> out;
    for (const std::string& c : commands) {
      if (absl::StartsWith(c, "ip netns del ")) out.push_back(c.substr(13));
    }
    return out;
  }
};

NetnsTopologyOptions FakeOptions(FakeRunner& fake, NetworkShape shape,
                                 std::vector<std::string> endpoints) {
  NetnsTopologyOptions o = Options(shape, std::move(endpoints));
  o.run = fake.Runner();
  return o;
}

TEST(NetnsTopologyTest, RunsThePlanAndDeletesEveryNamespaceInReverse) {
  FakeRunner fake;
  {
    absl::StatusOr<std::unique_ptr<NetnsTopology>> t =
        NetnsTopology::Create(FakeOptions(fake, Shape(10, 0), {"s0", "w0"}));
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ((*t)->size(), 2);
    EXPECT_THAT((*t)->CommandPrefix(1),
                ElementsAre("ip", "netns", "exec", "rsnet-42-0-w0"));
    EXPECT_EQ((*t)->Address(0), "10.77.0.2");
    EXPECT_EQ((*t)->Namespace(0), "rsnet-42-0-s0");
    EXPECT_THAT((*t)->latency_unavailable(), IsEmpty());
    EXPECT_THAT(fake.Deletes(), IsEmpty());
    const absl::StatusOr<NetnsPlan> plan =
        PlanNetns(Options(Shape(10, 0), {"s0", "w0"}));
    EXPECT_EQ(fake.commands, Joined(*plan));
  }
  EXPECT_THAT(fake.Deletes(),
              ElementsAre("rsnet-42-0-w0", "rsnet-42-0-s0", "rsnet-42-0-hub"));
}

TEST(NetnsTopologyTest, FailedSetupDeletesWhatWasMadeAndSaysWhy) {
  FakeRunner fake;
  fake.fail_on = "netns add rsnet-42-0-w0";
  fake.error = "mount --make-shared /run/netns failed: Operation not permitted";
  absl::StatusOr<std::unique_ptr<NetnsTopology>> t =
      NetnsTopology::Create(FakeOptions(fake, Shape(1, 0), {"s0", "w0"}));
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()),
              HasSubstr("ip netns add rsnet-42-0-w0 exited with code 2; last "
                        "stderr lines: | mount --make-shared"));
  EXPECT_THAT(fake.Deletes(), ElementsAre("rsnet-42-0-s0", "rsnet-42-0-hub"));
}

TEST(NetnsTopologyTest, WithoutNetemLinksKeepTheirBandwidthOnly) {
  FakeRunner fake;
  fake.fail_on = "netem";
  fake.error = "Error: Specified qdisc kind is unknown.";
  absl::StatusOr<std::unique_ptr<NetnsTopology>> t =
      NetnsTopology::Create(FakeOptions(fake, Shape(1, 50), {"s0", "w0"}));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT((*t)->latency_unavailable(), HasSubstr("no netem qdisc"));
  int netem_tries = 0, htb_classes = 0;
  for (const std::string& c : fake.commands) {
    netem_tries += absl::StrContains(c, "netem");
    htb_classes += absl::StrContains(c, "class add");
  }
  EXPECT_EQ(netem_tries, 1);  // the first failure stops the others
  EXPECT_EQ(htb_classes, 4);  // every egress still has its rate
}

TEST(JobNetworkTest, LoopbackWhenShapingIsOff) {
  std::unique_ptr<JobNetwork> net =
      JobNetwork::Start(NetworkShape(), "127.0.0.1", 1, 2);
  EXPECT_FALSE(net->shaped());
  EXPECT_EQ(net->Host(JobNetwork::kServer, 0), "127.0.0.1");
  EXPECT_EQ(net->Host(JobNetwork::kWorker, 1), "127.0.0.1");
  std::vector<std::string> argv = {"worker", "--rank=1"};
  net->Place(JobNetwork::kWorker, 1, argv);
  EXPECT_THAT(argv, ElementsAre("worker", "--rank=1"));
  EXPECT_EQ(net->Describe(), "loopback");
  EXPECT_THAT(net->Warnings(), IsEmpty());
}

TEST(JobNetworkTest, ServersThenWorkersEachInTheirNamespace) {
  FakeRunner fake;
  NetnsTopologyOptions base;
  base.run = fake.Runner();
  base.name_prefix = "rsnet-42-7";
  std::unique_ptr<JobNetwork> net =
      JobNetwork::Start(Shape(1, 0), "127.0.0.1", 2, 2, base);
  ASSERT_TRUE(net->shaped()) << net->fallback_reason();
  EXPECT_EQ(net->Host(JobNetwork::kServer, 1), "10.77.0.3");
  EXPECT_EQ(net->Host(JobNetwork::kWorker, 0), "10.77.0.4");
  std::vector<std::string> server = {"ps_server", "--port=0"};
  net->Place(JobNetwork::kServer, 1, server);
  EXPECT_THAT(server, ElementsAre("ip", "netns", "exec", "rsnet-42-7-s1",
                                  "ps_server", "--port=0"));
  std::vector<std::string> worker = {"worker", "--rank=1"};
  net->Place(JobNetwork::kWorker, 1, worker);
  EXPECT_THAT(worker,
              ElementsAre("ip", "netns", "exec", "rsnet-42-7-w1", "worker",
                          "--rank=1", "--transport_host=10.77.0.5"));
  EXPECT_EQ(net->Describe(),
            "netns: 1 Gbit/s links, no added latency, TCP reno");
  EXPECT_THAT(net->Warnings(), IsEmpty());
}

// DataParallel's layout: no namespace of the server's own; it runs in
// rank 0's, on rank 0's address, and the workers get the first addresses.
TEST(JobNetworkTest, ServersBesideRankZeroShareItsNamespace) {
  FakeRunner fake;
  NetnsTopologyOptions base;
  base.run = fake.Runner();
  base.name_prefix = "rsnet-42-8";
  std::unique_ptr<JobNetwork> net = JobNetwork::Start(
      Shape(1, 0), "127.0.0.1", 1, 2, base, /*servers_beside_rank0=*/true);
  ASSERT_TRUE(net->shaped()) << net->fallback_reason();
  EXPECT_EQ(net->Host(JobNetwork::kWorker, 0), "10.77.0.2");
  EXPECT_EQ(net->Host(JobNetwork::kServer, 0), "10.77.0.2");
  EXPECT_EQ(net->Host(JobNetwork::kWorker, 1), "10.77.0.3");
  std::vector<std::string> server = {"ps_server"};
  net->Place(JobNetwork::kServer, 0, server);
  EXPECT_THAT(server, ElementsAre("ip", "netns", "exec", "rsnet-42-8-w0",
                                  "ps_server"));
  for (const std::string& command : fake.commands) {
    EXPECT_EQ(command.find("-s0"), std::string::npos) << command;
  }
  EXPECT_THAT(net->Describe(),
              HasSubstr("; the servers in rank 0's namespace, behind its "
                        "link"));
}

TEST(JobNetworkTest, FallsBackToLoopbackSayingWhy) {
  FakeRunner fake;
  fake.fail_on = "netns add";
  fake.error = "mount of /run/netns failed: Permission denied";
  NetnsTopologyOptions base;
  base.run = fake.Runner();
  std::unique_ptr<JobNetwork> net =
      JobNetwork::Start(Shape(1, 0), "127.0.0.1", 1, 2, base);
  EXPECT_FALSE(net->shaped());
  EXPECT_EQ(net->Host(JobNetwork::kWorker, 1), "127.0.0.1");
  std::vector<std::string> argv = {"worker"};
  net->Place(JobNetwork::kWorker, 1, argv);
  EXPECT_THAT(argv, ElementsAre("worker"));
  EXPECT_THAT(net->fallback_reason(), HasSubstr("Permission denied"));
  EXPECT_THAT(net->Describe(),
              HasSubstr("loopback (network shaping unavailable: "));
  ASSERT_EQ(net->Warnings().size(), 1u);
  EXPECT_THAT(net->Warnings()[0],
              ::testing::StartsWith("network shaping unavailable: "));
  EXPECT_THAT(net->Warnings()[0], ::testing::EndsWith("; ran on loopback"));
}

TEST(JobNetworkTest, WarnsWhenLatencyIsNotEmulated) {
  FakeRunner fake;
  fake.fail_on = "netem";
  fake.error = "Error: Specified qdisc kind is unknown.";
  NetnsTopologyOptions base;
  base.run = fake.Runner();
  std::unique_ptr<JobNetwork> net =
      JobNetwork::Start(Shape(1, 50), "127.0.0.1", 0, 2, base);
  ASSERT_TRUE(net->shaped());
  EXPECT_THAT(net->Describe(),
              ::testing::StartsWith(
                  "netns: 1 Gbit/s links, no added latency, TCP reno; "
                  "the 50 us latency asked for is not "
                  "emulated: the kernel has no netem qdisc"));
  ASSERT_EQ(net->Warnings().size(), 1u);
  EXPECT_THAT(net->Warnings()[0],
              ::testing::StartsWith("latency emulation unavailable: the "
                                    "kernel has no netem qdisc"));
}

}  // namespace
}  // namespace ringside

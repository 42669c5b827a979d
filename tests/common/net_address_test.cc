#include "common/net_address.h"

#include <gtest/gtest.h>

namespace ringside {
namespace {

TEST(NetAddressTest, ParsesHostsAndPorts) {
  absl::StatusOr<HostPort> hp = ParseHostPort("node7:5000");
  ASSERT_TRUE(hp.ok());
  EXPECT_EQ(hp->host, "node7");
  EXPECT_EQ(hp->port, 5000);
  hp = ParseHostPort("[::1]:80");
  ASSERT_TRUE(hp.ok());
  EXPECT_EQ(hp->host, "::1");
  EXPECT_EQ(hp->ToString(), "[::1]:80");
  absl::StatusOr<std::vector<HostPort>> list =
      ParseHostPortList("a:1,127.0.0.1:2");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->size(), 2);
  EXPECT_EQ((*list)[1].ToString(), "127.0.0.1:2");
}

TEST(NetAddressTest, RejectsBadText) {
  for (const char* bad :
       {"", "host", ":80", "h:0", "h:70000", "h:x", "::1:80", "[::1]80"}) {
    absl::Status s = ParseHostPort(bad).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find("bad server address"), std::string::npos);
  }
  EXPECT_FALSE(ParseHostPortList("a:1,,b:2").ok());
  EXPECT_FALSE(ParseHostPortList("").ok());
}

}  // namespace
}  // namespace ringside

#include "thaw/merged/broker_map.h"

#include <gtest/gtest.h>

#include <vector>

#include "thaw/merged/api_versions.h"

namespace thaw::merged {
namespace {

namespace msg = kafka::msg;

TEST(ParseBrokerPorts, StartOrARange) {
  auto p = ParseBrokerPorts("19093");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->first, 19093);
  EXPECT_EQ(p->last, 19192);
  p = ParseBrokerPorts("19093-19095");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->last, 19095);
  for (const char* bad : {"", "x", "0", "70000", "19095-19093", "19093-", "-3"}) {
    SCOPED_TRACE(bad);
    auto r = ParseBrokerPorts(bad);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("--broker-ports"), std::string::npos);
  }
}

TEST(BrokerMap, EveryBrokerAddressBecomesThawsPortForItsNode) {
  BrokerMap map("thaw.example", {19000, 19009});
  std::vector<int32_t> opened;
  map.OnNewNode([&](int32_t n) { opened.push_back(n); });
  msg::MetadataResponse md;
  md.brokers.push_back({1, "kafka-1", 9092, std::nullopt, {}});
  md.brokers.push_back({3, "kafka-3", 9094, std::string("rack-a"), {}});
  md.brokers.push_back({42, "kafka-42", 9092, std::nullopt, {}});  // outside the range
  map.RewriteMetadata(md);
  EXPECT_EQ(md.brokers[0].host, "thaw.example");
  EXPECT_EQ(md.brokers[0].port, 19001);
  EXPECT_EQ(md.brokers[1].port, 19003);
  EXPECT_EQ(md.brokers[1].rack, std::optional<std::string>("rack-a"));
  EXPECT_EQ(md.brokers[2].host, "thaw.example");
  EXPECT_EQ(md.brokers[2].port, -1);  // never the upstream's own address
  EXPECT_EQ(opened, (std::vector<int32_t>{1, 3, 42}));
  ASSERT_TRUE(map.Upstream(3));
  EXPECT_EQ(map.Upstream(3)->host, "kafka-3");
  EXPECT_EQ(map.Upstream(3)->port, 9094);

  // Seen again: no new listener; a moved broker is followed.
  msg::MetadataResponse again;
  again.brokers.push_back({3, "kafka-3b", 9095, std::nullopt, {}});
  map.RewriteMetadata(again);
  EXPECT_EQ(opened.size(), 3u);
  EXPECT_EQ(map.Upstream(3)->host, "kafka-3b");

  msg::FindCoordinatorResponse fc;
  fc.node_id = 1;
  fc.host = "kafka-1";
  fc.port = 9092;
  fc.coordinators.push_back({"group-a", 3, "kafka-3b", 9095, 0, std::nullopt, {}});
  fc.coordinators.push_back({"group-b", -1, "", -1, 15, std::string("not available"), {}});
  map.RewriteFindCoordinator(fc);
  EXPECT_EQ(fc.port, 19001);
  EXPECT_EQ(fc.coordinators[0].host, "thaw.example");
  EXPECT_EQ(fc.coordinators[0].port, 19003);
  EXPECT_EQ(fc.coordinators[1].port, -1);
  EXPECT_EQ(fc.coordinators[1].host, "");

  msg::DescribeClusterResponse dc;
  dc.brokers.push_back({1, "kafka-1", 9092, std::nullopt, false, {}});
  map.RewriteDescribeCluster(dc);
  EXPECT_EQ(dc.brokers[0].host, "thaw.example");
  EXPECT_EQ(dc.brokers[0].port, 19001);
}

TEST(NarrowApiVersions, RewrittenApisStayWithinTheCodecAndAddressCarryingOnesGo) {
  msg::ApiVersionsResponse resp;
  resp.api_keys.push_back({0, 3, 13, {}});    // Produce
  resp.api_keys.push_back({1, 4, 18, {}});    // Fetch
  resp.api_keys.push_back({3, 0, 99, {}});    // Metadata, newer than the codec
  resp.api_keys.push_back({55, 0, 2, {}});    // DescribeQuorum
  resp.api_keys.push_back({78, 0, 1, {}});    // ShareFetch
  resp.api_keys.push_back({11, 0, 9, {}});    // JoinGroup: passed through
  resp.api_keys.push_back({1000, 0, 3, {}});  // unknown to Thaw: passed through
  resp.api_keys.push_back({17, 0, 1, {}});    // SaslHandshake
  NarrowApiVersions(resp);
  ASSERT_EQ(resp.api_keys.size(), 6u);
  EXPECT_EQ(resp.api_keys[5].min_version, 1);
  EXPECT_EQ(resp.api_keys[0].max_version, 9);
  EXPECT_EQ(resp.api_keys[1].max_version, 12);
  const kafka::ApiSpec* metadata = kafka::FindApiSpec(3);
  ASSERT_NE(metadata, nullptr);
  EXPECT_LE(resp.api_keys[2].max_version, metadata->max_version);
  EXPECT_EQ(resp.api_keys[3].api_key, 11);
  EXPECT_EQ(resp.api_keys[3].max_version, 9);
  EXPECT_EQ(resp.api_keys[4].api_key, 1000);
}

}  // namespace
}  // namespace thaw::merged

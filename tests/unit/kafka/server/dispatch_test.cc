#include "thaw/kafka/server/dispatch.h"

#include <gtest/gtest.h>

#include <set>

#include "thaw/kafka/protocol/messages.h"

namespace thaw::kafka::server {
namespace {

TEST(Dispatch, EveryServedRangeIsOneTheGeneratedCodecCanParse) {
  std::set<int16_t> keys;
  for (const ApiHandler& h : ApiHandlers()) {
    SCOPED_TRACE(h.key);
    EXPECT_TRUE(keys.insert(h.key).second) << "API key listed twice";
    const ApiSpec* spec = FindApiSpec(h.key);
    ASSERT_NE(spec, nullptr) << "served API without a generated codec";
    EXPECT_LE(h.min_version, h.max_version);
    EXPECT_LE(h.max_version, spec->max_version) << spec->name;
    if (spec->latest_version_unstable) {
      EXPECT_LT(h.max_version, spec->max_version) << spec->name << "'s latest version is unstable upstream";
    }
    // Produce is advertised from v0 (librdkafka's compression gate) although
    // Kafka 4's specs start at v3; every other range starts inside the spec.
    if (h.key != 0) EXPECT_GE(h.min_version, spec->min_version) << spec->name;
    EXPECT_EQ(FindApiHandler(h.key), &h);
  }
  EXPECT_EQ(FindApiHandler(9999), nullptr);
}

TEST(Dispatch, ServesWhatTheClientsNeed) {
  // ../shared/reference/kafka-protocol.md §1.4-1.5: the versions that must be
  // inside the advertised ranges for librdkafka 2.0.2's feature gates and
  // kafka-python's broker-version inference.
  struct Need {
    int16_t key, version;
    const char* why;
  };
  const Need needs[] = {
      {0, 0, "librdkafka <= 2.10 compresses only if Produce v0 is listed"},
      {0, 3, "librdkafka MSGVER2"},
      {0, 7, "librdkafka ZSTD"},
      {1, 4, "librdkafka MSGVER2"},
      {1, 10, "librdkafka ZSTD; kafka-python (2,1)"},
      {1, 11, "kafka-python (2,3)"},
      {2, 1, "librdkafka OFFSET_TIME"},
      {2, 5, "kafka-python (2,2)"},
      {3, 0, "kafka-python 2.0.2's Metadata v0 probe"},
      {3, 5, "kafka-python (1,0)"},
      {10, 0, "librdkafka BROKER_GROUP_COORD and LZ4"},
      {11, 0, "librdkafka SASL_GSSAPI gate"},
      {18, 3, "librdkafka 2.0.2 sends ApiVersions v3"},
      {18, 4, "Java 4.x sends ApiVersions v4"},
  };
  for (const Need& n : needs) {
    const ApiHandler* h = FindApiHandler(n.key);
    ASSERT_NE(h, nullptr) << n.why;
    EXPECT_TRUE(h->min_version <= n.version && n.version <= h->max_version) << n.why;
  }
}

}  // namespace
}  // namespace thaw::kafka::server

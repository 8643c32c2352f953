// Cross-check against Kafka's own Java codec. java_vectors.txt holds, for every
// generated message, every valid version and three fill seeds, the bytes this
// codec writes for a message whose every field holds a pseudo-random non-default
// value (msg::testing::FillForTest). Each line was decoded by Kafka 4.1.2's
// generated Java classes (org.apache.kafka.common.message.<Name>Data) and
// re-encoded by them to the very same bytes (JavaCrossCheck.java). This test
// fails if the codec's output for any of them changes.
//
// Regenerating (after a spec upgrade, say):
//   THAW_KAFKA_WRITE_VECTORS=/tmp/v.txt build/bin/thaw_unit_tests --gtest_filter='KafkaJavaVectors.*'
//   java -cp '.deps/kafka/lib/*' tests/unit/kafka/protocol/JavaCrossCheck.java /tmp/v.txt   # must print "bad 0"
//   cp /tmp/v.txt tests/unit/kafka/protocol/java_vectors.txt
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "test_hex.h"
#include "thaw/kafka/protocol/messages.h"
#include "thaw/kafka/protocol/messages_testing.h"

namespace thaw::kafka {
namespace {

using thaw::testing::Hex;

constexpr int kSeeds = 3;

// "<Name> <version> <seed> <hex>" for every message, version and seed.
template <typename M>
void Vectors(std::string* out) {
  for (int16_t v = M::kMinVersion; v <= M::kMaxVersion; ++v) {
    for (int seed = 1; seed <= kSeeds; ++seed) {
      M m;
      uint64_t rng = static_cast<uint64_t>(seed) * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(v);
      msg::testing::FillForTest(m, v, rng, 0);
      WireWriter w;
      m.Write(w, v);
      *out += std::string(M::kName) + " " + std::to_string(v) + " " + std::to_string(seed) + " " + Hex(w.data()) + "\n";
    }
  }
}

TEST(KafkaJavaVectors, OurEncodingIsTheOneKafkasJavaCodecReproduces) {
  std::string now;
  Vectors<msg::RequestHeader>(&now);
  Vectors<msg::ResponseHeader>(&now);
  msg::ForEachApi([&]<typename Req, typename Resp>() {
    Vectors<Req>(&now);
    Vectors<Resp>(&now);
  });
  if (const char* path = std::getenv("THAW_KAFKA_WRITE_VECTORS")) {
    std::ofstream(path) << now;
  }
  std::ifstream in(std::filesystem::path(THAW_SOURCE_DIR) / "tests/unit/kafka/protocol/java_vectors.txt");
  ASSERT_TRUE(in.good());
  std::stringstream approved;
  approved << in.rdbuf();
  // Line by line, so that a failure names the message and version.
  std::istringstream a(approved.str()), b(now);
  std::string la, lb;
  int lines = 0;
  while (std::getline(a, la)) {
    ASSERT_TRUE(std::getline(b, lb)) << "fewer vectors than java_vectors.txt";
    EXPECT_EQ(lb, la);
    ++lines;
  }
  EXPECT_FALSE(std::getline(b, lb)) << "more vectors than java_vectors.txt: " << lb;
  EXPECT_GT(lines, 1000);
}

}  // namespace
}  // namespace thaw::kafka

#include "thaw/replay/partitioner.h"

#include <gtest/gtest.h>


namespace thaw::replay {
namespace {

// Vectors of Apache Kafka's own murmur2 tests (clients UtilsTest).
TEST(KafkaMurmur2, MatchesTheJavaClient) {
  EXPECT_EQ(KafkaMurmur2("21"), -973932308);
  EXPECT_EQ(KafkaMurmur2("foobar"), -790332482);
  EXPECT_EQ(KafkaMurmur2("a-little-bit-long-string"), -985981536);
  EXPECT_EQ(KafkaMurmur2("a-little-bit-longer-string"), -1486304829);
  EXPECT_EQ(KafkaMurmur2("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8"), -58897971);
  EXPECT_EQ(KafkaMurmur2("abc"), 479470107);
}

TEST(KafkaMurmur2, PartitionIsPositiveModulo) {
  for (const char* k : {"21", "foobar", "abc", ""}) {
    int32_t p = JavaKeyPartition(k, 7);
    EXPECT_GE(p, 0);
    EXPECT_LT(p, 7);
    EXPECT_EQ(p, static_cast<int32_t>((static_cast<uint32_t>(KafkaMurmur2(k)) & 0x7fffffff) % 7));
  }
}

}  // namespace
}  // namespace thaw::replay

// FromOffset::Parse (--from-offset). The source's behaviour against a real
// broker is tested in tests/integration/test_kafka_source.py.
#include "thaw/archive/kafka_source.h"

#include <gtest/gtest.h>

namespace thaw::archive {
namespace {

TEST(FromOffsetTest, ParsesEarliestLatestAndOffsets) {
  auto e = FromOffset::Parse("earliest");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->kind, FromOffset::Kind::kEarliest);
  auto l = FromOffset::Parse("LATEST");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->kind, FromOffset::Kind::kLatest);
  auto z = FromOffset::Parse("0");
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(z->kind, FromOffset::Kind::kOffset);
  EXPECT_EQ(z->offset, 0);
  auto big = FromOffset::Parse("9223372036854775807");
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->offset, INT64_MAX);
}

TEST(FromOffsetTest, RefusesAnythingElse) {
  for (const char* bad : {"", "-1", "+5", "12x", " 12", "1e3", "9223372036854775808", "beginning", "0x10"}) {
    auto r = FromOffset::Parse(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(r.status().message().find("earliest, latest or an offset"), std::string::npos);
  }
}

}  // namespace
}  // namespace thaw::archive

#include "thaw/common/time_parse.h"

#include <gtest/gtest.h>

namespace thaw {
namespace {

TEST(ParseTimeMs, AcceptsEpochMillisAndIso8601) {
  EXPECT_EQ(*ParseTimeMs("1700000000123", "--t"), 1700000000123);
  EXPECT_EQ(*ParseTimeMs("1970-01-02", "--t"), 86'400'000);
  EXPECT_EQ(*ParseTimeMs("2023-11-14T22:13:20Z", "--t"), 1700000000000);
  EXPECT_EQ(*ParseTimeMs("2023-11-14T22:13:20.5Z", "--t"), 1700000000500);
  EXPECT_EQ(*ParseTimeMs("2023-11-15T00:13:20+02:00", "--t"), 1700000000000);
}

TEST(ParseTimeMs, RejectsGarbageNamingTheFlag) {
  auto r = ParseTimeMs("yesterday", "--as-of");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--as-of 'yesterday' is not a time"), std::string::npos);
  EXPECT_FALSE(ParseTimeMs("2023-13-01", "--t").ok());
}

}  // namespace
}  // namespace thaw

#include "thaw/common/units.h"

#include <gtest/gtest.h>

namespace thaw {
namespace {

int64_t Ms(std::string_view text, BareNumber bare = BareNumber::kRefused) {
  auto r = ParseDurationMs(text, "--d", bare);
  EXPECT_TRUE(r.ok()) << text << ": " << r.status().message();
  return r.ok() ? *r : -1;
}

std::string DurationError(std::string_view text) {
  auto r = ParseDurationMs(text, "--d");
  EXPECT_FALSE(r.ok()) << text << " was accepted as " << (r.ok() ? *r : 0);
  return r.ok() ? "" : r.status().message();
}

TEST(DurationTest, EveryUnit) {
  EXPECT_EQ(Ms("500ms"), 500);
  EXPECT_EQ(Ms("5s"), 5000);
  EXPECT_EQ(Ms("1.5s"), 1500);
  EXPECT_EQ(Ms("10m"), 600000);
  EXPECT_EQ(Ms("10min"), 600000);
  EXPECT_EQ(Ms("2h"), 7200000);
  EXPECT_EQ(Ms("7d"), 604800000);
  EXPECT_EQ(Ms("1w"), 604800000);
}

TEST(DurationTest, ABareNumberIsRefusedWithAHintExceptZero) {
  const std::string e = DurationError("3000");
  EXPECT_NE(e.find("--d '3000' has no unit"), std::string::npos) << e;
  EXPECT_NE(e.find("3000s for seconds, 3000ms for milliseconds"), std::string::npos) << e;
  EXPECT_EQ(Ms("0"), 0);
}

TEST(DurationTest, KafkasMillisecondOptionsTakeABareNumberAsMilliseconds) {
  // --group-initial-rebalance-delay 3000 is group.initial.rebalance.delay.ms=3000: 3 s, not 50 minutes.
  EXPECT_EQ(Ms("3000", BareNumber::kMilliseconds), 3000);
  EXPECT_EQ(Ms("3s", BareNumber::kMilliseconds), 3000);
}

TEST(DurationTest, WhatIsNotADuration) {
  EXPECT_NE(DurationError("soon").find("is not a duration"), std::string::npos);
  EXPECT_NE(DurationError("5y").find("unknown unit 'y' (use ms, s, m, h, d or w)"), std::string::npos);
  EXPECT_NE(DurationError("-5s").find("is not a duration"), std::string::npos);
  EXPECT_NE(DurationError("99999999999w").find("too long"), std::string::npos);
}

TEST(ByteSizeTest, BinaryAndDecimalUnits) {
  EXPECT_EQ(*ParseByteSize("64KiB", "--s"), 65536);
  EXPECT_EQ(*ParseByteSize("1MB", "--s"), 1000000);
  EXPECT_EQ(*ParseByteSize("2GiB", "--s"), int64_t{2} << 30);
  EXPECT_EQ(*ParseByteSize("4096", "--s"), 4096);
  EXPECT_EQ(*ParseByteSize("512", "--s", int64_t{1} << 20), int64_t{512} << 20);  // a bare-MiB option
  EXPECT_FALSE(ParseByteSize("1Q", "--s").ok());
}

}  // namespace
}  // namespace thaw

namespace thaw {
namespace {

TEST(ByteSizeTest, ALoneLetterIsNotAUnit) {
  auto r = ParseByteSize("512m", "--memory-budget", int64_t{1} << 20);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--memory-budget '512m': a size's unit is MiB (binary) or MB (decimal), not "
                                      "'m': write 512MiB or 512MB"),
            std::string::npos)
      << r.status().message();
  for (const char* t : {"1k", "1K", "2g", "2G", "3M"}) EXPECT_FALSE(ParseByteSize(t, "--s").ok()) << t;
}

}  // namespace
}  // namespace thaw

#include "thaw/common/time_parse.h"

#include <gtest/gtest.h>

#include "thaw/common/civil_time.h"

namespace thaw {
namespace {

std::string Error(std::string_view text, std::string_view flag = "--t") {
  auto r = ParseTimeMs(text, flag);
  EXPECT_FALSE(r.ok()) << text << " parsed as " << (r.ok() ? *r : 0);
  return r.ok() ? std::string() : r.status().message();
}

TEST(ParseTimeMs, AcceptsEpochMillisAndIso8601) {
  EXPECT_EQ(*ParseTimeMs("1700000000123", "--t"), 1700000000123);
  EXPECT_EQ(*ParseTimeMs("1970-01-02", "--t"), 86'400'000);
  EXPECT_EQ(*ParseTimeMs("2023-11-14T22:13:20Z", "--t"), 1700000000000);
  EXPECT_EQ(*ParseTimeMs("2023-11-14T22:13:20.5Z", "--t"), 1700000000500);
  EXPECT_EQ(*ParseTimeMs("2023-11-14T22:13:20.123456789Z", "--t"), 1700000000123);
  EXPECT_EQ(*ParseTimeMs("2023-11-15T00:13:20+02:00", "--t"), 1700000000000);
  EXPECT_EQ(*ParseTimeMs("2023-11-15T00:13:20+0200", "--t"), 1700000000000);
  EXPECT_EQ(*ParseTimeMs("2023-11-14T20:13:20-02", "--t"), 1700000000000);
  EXPECT_EQ(*ParseTimeMs("2023-11-14 22:13", "--t"), 1700000000000 - 20'000);
  EXPECT_EQ(*ParseTimeMs("2024-02-29", "--t"), 1709164800000);  // a leap day
  EXPECT_EQ(*ParseTimeMs("1969-12-31T23:59:59.999Z", "--t"), -1);
  EXPECT_EQ(*ParseTimeMs("0", "--t"), 0);
}

TEST(ParseTimeMs, ExplicitUnits) {
  EXPECT_EQ(*ParseTimeMs("1700000000s", "--t"), 1700000000000);
  EXPECT_EQ(*ParseTimeMs("1700000000ms", "--t"), 1700000000);  // explicit: taken as written
  EXPECT_EQ(*ParseTimeMs("1700000000123ms", "--t"), 1700000000123);
}

TEST(ParseTimeMs, EpochSecondsAreRefusedWithAHint) {
  std::string e = Error("1700000000", "--from-time");
  EXPECT_NE(e.find("--from-time '1700000000' looks like epoch seconds"), std::string::npos) << e;
  EXPECT_NE(e.find("1700000000s"), std::string::npos) << e;
  EXPECT_NE(e.find("1700000000000"), std::string::npos) << e;
  EXPECT_NE(Error("17000000000").find("epoch seconds"), std::string::npos);
}

TEST(ParseTimeMs, OutOfRangeIsAnErrorNotAWrap) {
  // Before: accepted, and the reader's ms -> us conversion overflowed into 0 records.
  std::string e = Error("9223372036854775807", "--to-time");
  EXPECT_NE(e.find("--to-time '9223372036854775807' is out of range"), std::string::npos) << e;
  EXPECT_NE(Error("99999999999999999999999").find("out of range"), std::string::npos);
  EXPECT_NE(Error("9223372036854775807s").find("out of range"), std::string::npos);
  EXPECT_NE(Error("253402300800000").find("out of range"), std::string::npos);
  EXPECT_EQ(*ParseTimeMs("253402300799999", "--t"), kMaxTimeMs);
  EXPECT_EQ(*ParseTimeMs("9999-12-31T23:59:59.999Z", "--t"), kMaxTimeMs);
  EXPECT_EQ(*ParseTimeMs("0000-01-01", "--t"), kMinTimeMs);
  EXPECT_NE(Error("9999-12-31T23:59:59.999-01:00").find("out of range"), std::string::npos);
}

TEST(ParseTimeMs, InvalidDatesAndClocksAreRejected) {
  EXPECT_NE(Error("2026-02-31").find("2026-02 has days 01 to 28"), std::string::npos);
  EXPECT_NE(Error("2023-02-29").find("2023-02 has days 01 to 28"), std::string::npos);
  EXPECT_NE(Error("2023-13-01").find("no month 13"), std::string::npos);
  EXPECT_NE(Error("2023-00-01").find("no month 00"), std::string::npos);
  EXPECT_NE(Error("2023-04-31").find("days 01 to 30"), std::string::npos);
  EXPECT_NE(Error("2026-01-01T00:00:00+99:99").find("offset +99:99"), std::string::npos);
  EXPECT_NE(Error("2026-01-01T00:00:00+19:00").find("offset +19:00"), std::string::npos);
  EXPECT_NE(Error("2026-01-01T24:00").find("hour 24"), std::string::npos);
  EXPECT_NE(Error("2026-01-01T23:60").find("minute 60"), std::string::npos);
  EXPECT_NE(Error("2026-01-01T23:59:60Z").find("second 60"), std::string::npos);
  EXPECT_NE(Error("2026-01-01T12:00:00.Z").find("fraction"), std::string::npos);
  EXPECT_NE(Error("2026-01-01T12:00:00Zjunk").find("unexpected 'junk'"), std::string::npos);
  EXPECT_NE(Error("2026-1-1").find("YYYY-MM-DD"), std::string::npos);
}

TEST(ParseTimeMs, RejectsGarbageNamingTheFlag) {
  EXPECT_NE(Error("yesterday", "--as-of").find("--as-of 'yesterday' is not a time"), std::string::npos);
  EXPECT_NE(Error("", "--as-of").find("--as-of is empty"), std::string::npos);
  EXPECT_NE(Error("12x").find("is not a time"), std::string::npos);
  EXPECT_NE(Error("1.5").find("is not a time"), std::string::npos);
}

TEST(CivilTime, RoundTripsAcrossEraBoundariesAndFarYears) {
  for (int64_t days : {int64_t{0}, int64_t{-1}, int64_t{59}, int64_t{-719468}, int64_t{2932896},
                       int64_t{106'751'991}, int64_t{-106'751'991}, int64_t{11'000'000}}) {
    int64_t y;
    unsigned m, d;
    CivilFromDays(days, &y, &m, &d);
    EXPECT_EQ(DaysFromCivil(y, m, d), days) << days;
  }
  int64_t y;
  unsigned m, d;
  CivilFromDays(-1, &y, &m, &d);
  EXPECT_EQ(y, 1969);
  EXPECT_EQ(m, 12u);
  EXPECT_EQ(d, 31u);
  // Beyond date's 16-bit year: year 294247 (the last of int64 microseconds).
  CivilFromDays(106'751'991, &y, &m, &d);
  EXPECT_EQ(y, 294247);
  EXPECT_EQ(m, 1u);
  EXPECT_EQ(d, 10u);
  EXPECT_EQ(DaysFromCivil(2000, 3, 1), 11017);
}

}  // namespace
}  // namespace thaw

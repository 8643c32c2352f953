#include "thaw/replay/topic_check.h"

#include <gtest/gtest.h>

namespace thaw::replay {
namespace {

constexpr int64_t kDay = 86400000;
constexpr int64_t kNow = 1764500000000;  // 2025-11-30

TopicLimits Limits(std::map<std::string, std::string> configs) {
  auto l = TopicLimits::FromConfigs(configs);
  EXPECT_TRUE(l.ok()) << l.status().ToString();
  return *l;
}

PlannedRecords Planned(int64_t oldest, int64_t newest, int64_t bytes = 1000, int32_t parts = 1) {
  PlannedRecords p;
  p.timestamp_range_ms = std::make_pair(oldest, newest);
  p.bytes = bytes;
  p.target_partitions = parts;
  return p;
}

TEST(TopicCheck, BrokerDefaultsKeepNothingOldAndRefuse) {
  // What a topic created with broker defaults reports: 7 days.
  auto l = Limits({{"retention.ms", "604800000"}, {"retention.bytes", "-1"}, {"cleanup.policy", "delete"},
                   {"message.timestamp.type", "CreateTime"}});
  std::vector<std::string> warnings;
  Status st = CheckTopic("t", l, Planned(kNow - 90 * kDay, kNow - 80 * kDay), TimestampMode::kOriginal, false, kNow,
                         &warnings);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("retention.ms=604800000 (7d)"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("retention.ms=-1"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("--force"), std::string::npos) << st.message();
  EXPECT_TRUE(warnings.empty());
}

TEST(TopicCheck, ForceTurnsRetentionIntoAWarning) {
  auto l = Limits({{"retention.ms", "604800000"}});
  std::vector<std::string> warnings;
  Status st = CheckTopic("t", l, Planned(kNow - 90 * kDay, kNow), TimestampMode::kOriginal, true, kNow, &warnings);
  EXPECT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("retention.ms"), std::string::npos);
}

TEST(TopicCheck, RecentRecordsOrInfiniteRetentionPass) {
  std::vector<std::string> warnings;
  EXPECT_TRUE(CheckTopic("t", Limits({{"retention.ms", "604800000"}}), Planned(kNow - kDay, kNow),
                         TimestampMode::kOriginal, false, kNow, &warnings).ok());
  EXPECT_TRUE(CheckTopic("t", Limits({{"retention.ms", "-1"}}), Planned(0, kNow), TimestampMode::kOriginal, false,
                         kNow, &warnings).ok());
  // --timestamps now: records get the produce time, retention by time cannot bite.
  EXPECT_TRUE(CheckTopic("t", Limits({{"retention.ms", "3600000"}}), Planned(0, kNow), TimestampMode::kNow, false,
                         kNow, &warnings).ok());
  EXPECT_TRUE(warnings.empty());
}

TEST(TopicCheck, LogAppendTimeNeedsTimestampsNowOrForce) {
  auto l = Limits({{"message.timestamp.type", "LogAppendTime"}});
  std::vector<std::string> warnings;
  Status st = CheckTopic("t", l, Planned(kNow, kNow), TimestampMode::kOriginal, false, kNow, &warnings);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("LogAppendTime"), std::string::npos);
  EXPECT_NE(st.message().find("--timestamps now"), std::string::npos);
  EXPECT_TRUE(CheckTopic("t", l, Planned(kNow, kNow), TimestampMode::kNow, false, kNow, &warnings).ok());
}

TEST(TopicCheck, RetentionBytesAgainstPlannedBytesPerPartition) {
  auto l = Limits({{"retention.bytes", "1000000"}});
  std::vector<std::string> warnings;
  EXPECT_FALSE(CheckTopic("t", l, Planned(kNow, kNow, 8000000, 4), TimestampMode::kOriginal, false, kNow, &warnings)
                   .ok());
  EXPECT_TRUE(CheckTopic("t", l, Planned(kNow, kNow, 3000000, 4), TimestampMode::kOriginal, false, kNow, &warnings)
                  .ok());
}

TEST(TopicCheck, TimestampBoundsAreRefusedEvenWithForce) {
  auto l = Limits({{"message.timestamp.before.max.ms", std::to_string(30 * kDay)},
                   {"message.timestamp.after.max.ms", "3600000"}});
  std::vector<std::string> warnings;
  Status old = CheckTopic("t", l, Planned(kNow - 60 * kDay, kNow), TimestampMode::kOriginal, true, kNow, &warnings);
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.message().find("message.timestamp.before.max.ms"), std::string::npos);
  Status future = CheckTopic("t", l, Planned(kNow, kNow + 2 * 3600000), TimestampMode::kOriginal, true, kNow,
                             &warnings);
  ASSERT_FALSE(future.ok());
  EXPECT_NE(future.message().find("message.timestamp.after.max.ms"), std::string::npos);
  // Kafka < 3.6 only has difference.max.ms; Long.MAX_VALUE means unbounded.
  auto legacy = Limits({{"message.timestamp.difference.max.ms", std::to_string(kDay)}});
  EXPECT_FALSE(CheckTopic("t", legacy, Planned(kNow - 2 * kDay, kNow), TimestampMode::kOriginal, false, kNow,
                          &warnings).ok());
  auto unbounded = Limits({{"message.timestamp.before.max.ms", "9223372036854775807"}});
  EXPECT_TRUE(CheckTopic("t", unbounded, Planned(0, kNow), TimestampMode::kOriginal, false, kNow, &warnings).ok());
}

TEST(TopicCheck, RecordChecks) {
  auto compact = Limits({{"cleanup.policy", "compact,delete"}, {"max.message.bytes", "1048588"}});
  Status nullkey = CheckRecord("t", compact, kNow, 10, true, false, kNow, 3, 17);
  ASSERT_FALSE(nullkey.ok());
  EXPECT_NE(nullkey.message().find("source partition 3 offset 17"), std::string::npos);
  EXPECT_NE(nullkey.message().find("cleanup.policy=compact"), std::string::npos);
  EXPECT_TRUE(CheckRecord("t", compact, kNow, 10, false, false, kNow, 3, 17).ok());
  Status big = CheckRecord("t", compact, kNow, 2 << 20, false, false, kNow, 0, 1);
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.message().find("max.message.bytes=1048588"), std::string::npos);
  auto week = Limits({{"retention.ms", "604800000"}});
  EXPECT_FALSE(CheckRecord("t", week, kNow - 30 * kDay, 10, false, false, kNow, 0, 1).ok());
  EXPECT_TRUE(CheckRecord("t", week, kNow - 30 * kDay, 10, false, true, kNow, 0, 1).ok());  // --force
  EXPECT_TRUE(CheckRecord("t", week, -1, 10, false, false, kNow, 0, 1).ok());               // produce time
  // A real timestamp of 0 is a timestamp, not "none".
  EXPECT_FALSE(CheckRecord("t", week, 0, 10, false, false, kNow, 0, 1).ok());
}

TEST(TopicCheck, CreatedTopicsKeepEverythingUnlessOverridden) {
  auto c = CreatedTopicConfigs({});
  EXPECT_EQ(c["retention.ms"], "-1");
  EXPECT_EQ(c["retention.bytes"], "-1");
  auto d = CreatedTopicConfigs({{"retention.ms", "86400000"}, {"compression.type", "zstd"}});
  EXPECT_EQ(d["retention.ms"], "86400000");
  EXPECT_EQ(d["compression.type"], "zstd");
  EXPECT_EQ(d["retention.bytes"], "-1");
}

TEST(TopicCheck, BadConfigValuesAreNamed) {
  auto l = TopicLimits::FromConfigs({{"retention.ms", "soon"}});
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find("retention.ms='soon'"), std::string::npos);
}

}  // namespace
}  // namespace thaw::replay

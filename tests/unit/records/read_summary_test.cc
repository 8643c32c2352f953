// The canonical range text a replay job stores (it resumes only with the
// same one) and the per-partition summary of a read.
#include "thaw/records/read_summary.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace thaw::records {
namespace {

TEST(FormatPartitionSet, CompressesRunsIntoRanges) {
  EXPECT_EQ(FormatPartitionSet({}), "");
  EXPECT_EQ(FormatPartitionSet({3}), "3");
  EXPECT_EQ(FormatPartitionSet({0, 3, 4, 5}), "0,3-5");
  EXPECT_EQ(FormatPartitionSet({5, 4, 1, 0, 9}), "0-1,4-5,9");
  EXPECT_EQ(FormatPartitionSet({2147483646, 2147483647}), "2147483646-2147483647");
}

TEST(CanonicalRange, IsTheSameHoweverTheRangeWasSpelled) {
  EXPECT_EQ(CanonicalRange(ReadOptions{}), "");
  ReadOptions a;
  a.partitions = std::set<int32_t>{5, 3, 4, 0};
  a.from_offset = 10;
  a.to_offset = 20;
  a.from_time_ms = 1700000000000;
  EXPECT_EQ(CanonicalRange(a, 2, "key = 'x'"),
            "partitions=0,3-5 from-offset=10 to-offset=20 from-time=1700000000000 exclude=2 "
            "offsets where=key = 'x'");
  ReadOptions b;
  b.partitions = std::set<int32_t>{0, 3, 4, 5};
  b.to_time_ms = 5;
  EXPECT_EQ(CanonicalRange(b), "partitions=0,3-5 to-time=5");
  // The source topic is part of the range: a job resumes only with the same one.
  ReadOptions t = b;
  t.source_topic = "orders.eu";
  EXPECT_EQ(CanonicalRange(t), "source-topic=orders.eu partitions=0,3-5 to-time=5");
  // Reader settings are not part of the range.
  ReadOptions c = b;
  c.batch_size = 1;
  c.metadata_only = true;
  c.read_ahead = 9;
  EXPECT_EQ(CanonicalRange(c), CanonicalRange(b));
}

Record At(int32_t p, int64_t o, int64_t ts) {
  Record r;
  r.partition = p;
  r.offset = o;
  r.timestamp_ms = ts;
  return r;
}

TEST(ReadSummary, CountsRecordsBoundsAndGapsPerPartitionWhateverTheInterleaving) {
  ReadSummary s;
  // Partitions interleaved, each in offset order (as a reader yields them).
  for (const auto& r :
       {At(1, 5, 50), At(0, 0, 9), At(1, 6, 40), At(0, 1, 10), At(0, 4, 7), At(1, 9, 60), At(0, 5, 11), At(0, 9, 12)}) {
    s.Add(r);
  }
  EXPECT_EQ(s.records(), 8);
  ASSERT_EQ(s.partitions().size(), 2u);
  const auto& p0 = s.partitions().at(0);
  EXPECT_EQ(p0.records, 5);
  EXPECT_EQ(p0.min_offset, 0);
  EXPECT_EQ(p0.max_offset, 9);
  EXPECT_EQ(p0.min_timestamp_ms, 7);
  EXPECT_EQ(p0.max_timestamp_ms, 12);
  EXPECT_EQ(p0.gaps, (std::vector<std::pair<int64_t, int64_t>>{{2, 3}, {6, 8}}));
  EXPECT_EQ(p0.gap_count, 2);
  const auto& p1 = s.partitions().at(1);
  EXPECT_EQ(p1.records, 3);
  EXPECT_EQ(p1.min_offset, 5);
  EXPECT_EQ(p1.gaps, (std::vector<std::pair<int64_t, int64_t>>{{7, 8}}));
  EXPECT_EQ(p1.min_timestamp_ms, 40);
}

TEST(ReadSummary, KeepsTheFirstGapsAndCountsAll) {
  ReadSummary s;
  for (int64_t o = 0; o < 2 * static_cast<int64_t>(ReadSummary::kMaxGaps) + 10; ++o) s.Add(At(0, 2 * o, 0));
  const auto& p = s.partitions().at(0);
  EXPECT_EQ(p.gaps.size(), ReadSummary::kMaxGaps);
  EXPECT_EQ(p.gap_count, 2 * static_cast<int64_t>(ReadSummary::kMaxGaps) + 9);
  EXPECT_EQ(p.gaps.front(), (std::pair<int64_t, int64_t>{1, 1}));
}

}  // namespace
}  // namespace thaw::records

// Time bounds in the column's units saturate instead of wrapping: year 9999
// in nanoseconds is past int64, and must mean "no bound", not a negative time.
TEST(MsToTimestampUnits, SaturatesAtTheInt64Limits) {
  using thaw::records::MsToTimestampUnits;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  const int64_t year9999_ms = 253402300799000;  // 9999-12-31T23:59:59Z
  EXPECT_EQ(MsToTimestampUnits(year9999_ms, 1000), year9999_ms * 1000);
  EXPECT_EQ(MsToTimestampUnits(year9999_ms, 1'000'000), kMax);
  EXPECT_EQ(MsToTimestampUnits(-year9999_ms, 1'000'000), kMin);
  EXPECT_EQ(MsToTimestampUnits(kMax, 1), kMax);
  EXPECT_EQ(MsToTimestampUnits(-5, 1000), -5000);
}

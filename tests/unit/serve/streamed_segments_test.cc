// Streamed partitions of `thaw serve` (streamed_segments.h) on a real table
// pyiceberg wrote (tests/unit/records/make_reader_fixture.py, ns.shuffled):
// 12 files whose offsets interleave (file i holds offsets = i mod 12, in a
// shuffled order), so every row group spans the whole partition. A pass
// from the start reads every offset once, in order, with one reader that
// each next segment continues; a second pass is served from the cache; a
// consumer in the middle of a cut gets that cut; evicted cuts are read
// again to the same bounds. Set THAW_PYTHON to a python with pyiceberg.
#include "thaw/serve/streamed_segments.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "python_fixture.h"
#include "thaw/catalog/catalog.h"
#include "thaw/records/read_plan.h"

namespace thaw::serve {
namespace {

class StreamedFixture : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!fixture_.info.is_null() || !fixture_.skip.empty()) return;
    fixture_ = testing::RunPythonFixture("tests/unit/records/make_reader_fixture.py", "thaw_streamed_fixture_");
    ASSERT_TRUE(fixture_.error.empty()) << fixture_.error;
  }
  void SetUp() override {
    if (!fixture_.skip.empty()) GTEST_SKIP() << fixture_.skip;
    ASSERT_TRUE(fixture_.error.empty()) << fixture_.error;
    auto t = catalog::LoadTableFromMetadata(fixture_.info["shuffled"].get<std::string>());
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    auto plan = records::ReadPlan::Make(std::make_shared<const iceberg::Table>(std::move(*t)), {});
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    part_.plan = *plan;
    part_.partition = 0;
    part_.key_prefix = "test";
    auto rgs = (*plan)->RowGroups(0);
    ASSERT_TRUE(rgs.ok()) << rgs.status().ToString();
    part_.row_groups = *rgs;
    offsets_ = fixture_.info["shuffled_offsets"].get<int64_t>();
  }

  static StreamedSegments::Options Small() {
    StreamedSegments::Options o;
    o.read.cut.max_bytes = 8 << 10;  // several batches a cut
    o.read.memory_budget = 64 << 20;
    o.segment_bytes = 40 << 10;  // ~75 records of 512 B: about 13 cuts
    return o;
  }

  // Reads from `from` to the end, segment after segment; returns the cuts
  // seen ([lo, hi)) and checks the records' offsets are from..end, once each.
  std::vector<std::pair<int64_t, int64_t>> Pass(StreamedSegments& s, int64_t from) {
    std::vector<std::pair<int64_t, int64_t>> cuts;
    int64_t pos = from, next_offset = from;
    while (true) {
      auto seg = s.SegmentAt(part_, pos);
      EXPECT_TRUE(seg.ok()) << seg.status().ToString();
      if (!seg.ok() || !*seg) break;
      EXPECT_GT((*seg)->hi, pos);
      EXPECT_LE((*seg)->lo, pos);
      cuts.emplace_back((*seg)->lo, (*seg)->hi);
      for (const auto& b : (*seg)->batches) {
        if (b.last_offset < next_offset) continue;  // before `from` in the first cut
        EXPECT_EQ(b.base_offset <= next_offset && next_offset <= b.last_offset, true)
            << "batch [" << b.base_offset << ", " << b.last_offset << "] after offset " << next_offset - 1;
        next_offset = b.last_offset + 1;
      }
      pos = (*seg)->hi;
    }
    EXPECT_EQ(next_offset, offsets_);
    return cuts;
  }

  static inline testing::PythonFixture fixture_;
  StreamedPartition part_;
  int64_t offsets_ = 0;
};

TEST_F(StreamedFixture, APassReadsEveryOffsetOnceWithOneReaderContinued) {
  ASSERT_GT(part_.row_groups->size(), 8u) << "the fixture no longer overlaps enough to be streamed";
  auto cache = std::make_shared<BatchCache>(int64_t{64} << 20);
  StreamedSegments s(Small(), cache);
  const auto cuts = Pass(s, 0);
  ASSERT_GT(cuts.size(), 4u);
  const auto st = s.stats();
  EXPECT_EQ(st.cursors_opened, 1);
  EXPECT_EQ(st.cursors_continued, static_cast<int64_t>(cuts.size()) - 1 + 1);  // + the empty read at the end
  // Each row group decoded about once: the records of the partition, not
  // the partition once per cut.
  EXPECT_LE(st.decode.rows, 2 * offsets_);
  // A second pass: every cut from the cache, nothing decoded.
  const auto again = Pass(s, 0);
  EXPECT_EQ(again, cuts);
  EXPECT_EQ(s.stats().decode.rows, st.decode.rows);
}

TEST_F(StreamedFixture, AConsumerInsideACutGetsThatCut) {
  auto cache = std::make_shared<BatchCache>(int64_t{64} << 20);
  StreamedSegments s(Small(), cache);
  const auto cuts = Pass(s, 0);
  ASSERT_GT(cuts.size(), 2u);
  const auto [lo, hi] = cuts[1];
  const int64_t mid = lo + (hi - lo) / 2;
  auto seg = s.SegmentAt(part_, mid);
  ASSERT_TRUE(seg.ok() && *seg);
  EXPECT_EQ((*seg)->lo, lo);
  EXPECT_EQ((*seg)->hi, hi);
  // A consumer from the middle reads the rest, through the same cuts.
  const auto rest = Pass(s, mid);
  EXPECT_EQ(rest.front(), cuts[1]);
  EXPECT_EQ(rest.size(), cuts.size() - 1);
}

TEST_F(StreamedFixture, EvictedCutsAreReadAgainToTheSameBounds) {
  auto cache = std::make_shared<BatchCache>(1);  // keeps nothing
  StreamedSegments s(Small(), cache);
  const auto cuts = Pass(s, 0);
  const auto again = Pass(s, 0);
  EXPECT_EQ(again, cuts);
  // The second pass continued one reader too (opened at 0 again).
  EXPECT_EQ(s.stats().cursors_opened, 2);
}

TEST_F(StreamedFixture, ConsumersAtDifferentPositionsEachKeepTheirReader) {
  auto cache = std::make_shared<BatchCache>(int64_t{64} << 20);
  auto o = Small();
  o.max_cursors = 4;
  StreamedSegments s(o, cache);
  // Three consumers interleaved, a segment each in turn.
  std::vector<int64_t> pos = {0, offsets_ / 3, 2 * offsets_ / 3};
  std::vector<int64_t> next = pos;
  bool more = true;
  while (more) {
    more = false;
    for (size_t c = 0; c < pos.size(); ++c) {
      if (pos[c] < 0) continue;
      auto seg = s.SegmentAt(part_, pos[c]);
      ASSERT_TRUE(seg.ok()) << seg.status().ToString();
      if (!*seg) {
        pos[c] = -1;
        continue;
      }
      more = true;
      for (const auto& b : (*seg)->batches) {
        if (b.last_offset < next[c]) continue;
        EXPECT_LE(b.base_offset, next[c]);
        next[c] = b.last_offset + 1;
      }
      pos[c] = (*seg)->hi;
    }
  }
  for (auto n : next) EXPECT_EQ(n, offsets_);
  // At most one reader per consumer start, never one per segment.
  EXPECT_LE(s.stats().cursors_opened, 3 + 3);
}

}  // namespace
}  // namespace thaw::serve

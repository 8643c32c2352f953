#include "thaw/merged/tiering.h"

#include <gtest/gtest.h>

#include "thaw/kafka/protocol/record_batch.h"

namespace thaw::merged {
namespace {

using kafka::server::PartitionOffsets;

TierBounds Bounds(int64_t l, int64_t h, std::optional<std::pair<int64_t, int64_t>> table) {
  TierBounds b;
  b.upstream_start = l;
  b.upstream_end = h;
  if (table) b.table = PartitionOffsets{table->first, table->second};
  return b;
}

TEST(RouteRefusedFetch, BelowTheUpstreamsLogStartTheTableAnswersWhatItHolds) {
  const auto b = Bounds(1000, 1500, std::make_pair(0, 1200));
  EXPECT_EQ(RouteRefusedFetch(0, b), Route::kTable);
  EXPECT_EQ(RouteRefusedFetch(999, b), Route::kTable);
}

TEST(RouteRefusedFetch, TheBoundaryMovedUnderTheRequest) {
  const auto b = Bounds(1000, 1500, std::make_pair(0, 1200));
  EXPECT_EQ(RouteRefusedFetch(1000, b), Route::kRetry);
  EXPECT_EQ(RouteRefusedFetch(1500, b), Route::kRetry);
  EXPECT_EQ(RouteRefusedFetch(1501, b), Route::kOutOfRange);
}

TEST(RouteRefusedFetch, ARangeNeitherTierHoldsIsSkipped) {
  // The archive reached 800, retention deleted up to 1000.
  const auto b = Bounds(1000, 1500, std::make_pair(0, 800));
  EXPECT_EQ(RouteRefusedFetch(799, b), Route::kTable);
  EXPECT_EQ(RouteRefusedFetch(800, b), Route::kSkipToUpstream);
  EXPECT_EQ(RouteRefusedFetch(999, b), Route::kSkipToUpstream);
}

TEST(RouteRefusedFetch, BelowAllHistoryIsOutOfRangeAsKafkaSays) {
  EXPECT_EQ(RouteRefusedFetch(5, Bounds(1000, 1500, std::make_pair(100, 1200))), Route::kOutOfRange);
  // An empty table holds nothing: the upstream's log start is the log start.
  EXPECT_EQ(RouteRefusedFetch(5, Bounds(1000, 1500, std::make_pair(0, 0))), Route::kOutOfRange);
  EXPECT_EQ(RouteRefusedFetch(5, Bounds(1000, 1500, std::nullopt)), Route::kOutOfRange);
}

TEST(MergedLogStart, TheLowerOfBothTiersWhenTheTableHoldsAnything) {
  EXPECT_EQ(MergedLogStart(1000, PartitionOffsets{0, 1200}), 0);
  EXPECT_EQ(MergedLogStart(1000, PartitionOffsets{1100, 1200}), 1000);
  EXPECT_EQ(MergedLogStart(1000, PartitionOffsets{0, 0}), 1000);
  EXPECT_EQ(MergedLogStart(1000, std::nullopt), 1000);
  EXPECT_EQ(MergedLogStart(-1, PartitionOffsets{3, 9}), 3);
}

std::shared_ptr<const std::string> Batch(int64_t base, int n, int32_t epoch) {
  kafka::RecordBatch owner;
  std::vector<std::string> values(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    values[static_cast<size_t>(i)] = "v" + std::to_string(base + i);
    kafka::Record r;
    r.offset = base + i;
    r.timestamp_ms = 1000 + base + i;
    r.value = values[static_cast<size_t>(i)];
    owner.records.push_back(r);
  }
  kafka::BatchOptions opts;
  opts.leader_epoch = epoch;
  std::string out;
  Status st = kafka::AppendRecordBatch(owner.records, owner, opts, &out);
  EXPECT_TRUE(st.ok()) << st.message();
  return std::make_shared<const std::string>(std::move(out));
}

TEST(AppendColdBatches, StopsWhereTheUpstreamServesAndClearsTheLeaderEpoch) {
  std::vector<std::shared_ptr<const std::string>> batches{Batch(0, 10, 7), Batch(10, 10, 7), Batch(20, 10, 7)};
  std::vector<std::shared_ptr<const std::string>> copies;
  const int64_t used = AppendColdBatches(batches, 20, 1 << 20, true, &copies);
  EXPECT_EQ(used, static_cast<int64_t>(batches[0]->size() + batches[1]->size()));
  std::string records;
  for (const auto& c : copies) records += *c;
  ASSERT_EQ(records.size(), static_cast<size_t>(used));
  EXPECT_EQ(batches[0]->substr(12, 4), std::string("\0\0\0\x07", 4));  // the cached batch keeps its epoch
  // Each copy still decodes (CRC intact) and carries epoch -1.
  auto decoded = kafka::DecodeRecordBatches(records);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  ASSERT_EQ(decoded->size(), 2u);
  EXPECT_EQ((*decoded)[0].base_offset, 0);
  EXPECT_EQ((*decoded)[1].base_offset, 10);
  for (const auto& b : *decoded) {
    EXPECT_EQ(b.leader_epoch, -1);
    EXPECT_EQ(b.records.size(), 10u);
  }
}

TEST(AppendColdBatches, BatchesCachedWithoutAnEpochAreSharedNotCopied) {
  // serve --upstream caches the table's batches with epoch -1 already.
  std::vector<std::shared_ptr<const std::string>> batches{Batch(0, 10, -1), Batch(10, 10, 3)};
  std::vector<std::shared_ptr<const std::string>> records;
  AppendColdBatches(batches, 100, 1 << 20, true, &records);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].get(), batches[0].get());  // as it is
  EXPECT_NE(records[1].get(), batches[1].get());  // a copy with the epoch cleared
  auto decoded = kafka::DecodeRecordBatches(*records[1]);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ((*decoded)[0].leader_epoch, -1);
}

TEST(AppendColdBatches, TheFirstBatchIsWholeAndTheRestFitTheLimit) {
  std::vector<std::shared_ptr<const std::string>> batches{Batch(0, 10, 0), Batch(10, 10, 0)};
  std::vector<std::shared_ptr<const std::string>> records;
  EXPECT_EQ(AppendColdBatches(batches, 100, 1, true, &records), static_cast<int64_t>(batches[0]->size()));
  records.clear();
  EXPECT_EQ(AppendColdBatches(batches, 100, 1, false, &records), 0);
  EXPECT_TRUE(records.empty());
}

}  // namespace
}  // namespace thaw::merged

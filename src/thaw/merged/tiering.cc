#include "thaw/merged/tiering.h"

#include <algorithm>

#include "thaw/kafka/protocol/record_batch.h"

namespace thaw::merged {

namespace {

int64_t BaseOffset(const std::string& batch) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(batch[i]);
  return static_cast<int64_t>(v);
}

}  // namespace

Route RouteRefusedFetch(int64_t fetch_offset, const TierBounds& b) {
  if (fetch_offset > b.upstream_end) return Route::kOutOfRange;
  if (fetch_offset >= b.upstream_start) return Route::kRetry;
  if (!b.table_has_data() || fetch_offset < b.table->log_start) return Route::kOutOfRange;
  if (fetch_offset < b.table->high_watermark) return Route::kTable;
  return Route::kSkipToUpstream;
}

int64_t MergedLogStart(int64_t upstream_start, const std::optional<kafka::server::PartitionOffsets>& table) {
  if (!table || table->high_watermark <= table->log_start) return upstream_start;
  if (upstream_start < 0) return table->log_start;
  return std::min(upstream_start, table->log_start);
}

int64_t AppendColdBatches(const std::vector<std::shared_ptr<const std::string>>& batches, int64_t stop_offset,
                          int64_t limit, bool first_whole, std::vector<std::shared_ptr<const std::string>>* records) {
  int64_t used = 0;
  for (const auto& b : batches) {
    if (!b || b->size() < kafka::kRecordBatchHeaderSize) continue;
    if (BaseOffset(*b) >= stop_offset) break;
    const int64_t size = static_cast<int64_t>(b->size());
    if (used + size > limit && !(first_whole && used == 0)) break;
    // serve --upstream caches them without an epoch: shared as they are.
    records->push_back(kafka::WithLeaderEpoch(b, -1));
    used += size;
  }
  return used;
}

}  // namespace thaw::merged

#include "thaw/merged/tiering.h"

#include <algorithm>

namespace thaw::merged {

namespace {

constexpr size_t kBatchHeaderBytes = 61;  // record batch v2 header
constexpr size_t kLeaderEpochAt = 12;     // base offset (8) + batch length (4)

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
    if (!b || b->size() < kBatchHeaderBytes) continue;
    if (BaseOffset(*b) >= stop_offset) break;
    const int64_t size = static_cast<int64_t>(b->size());
    if (used + size > limit && !(first_whole && used == 0)) break;
    if (std::all_of(b->begin() + kLeaderEpochAt, b->begin() + kLeaderEpochAt + 4,
                    [](char c) { return c == '\xff'; })) {
      records->push_back(b);  // cached without an epoch (serve --upstream): sent as it is
    } else {
      std::string copy = *b;
      std::fill_n(copy.begin() + static_cast<std::ptrdiff_t>(kLeaderEpochAt), 4, '\xff');
      records->push_back(std::make_shared<const std::string>(std::move(copy)));
    }
    used += size;
  }
  return used;
}

}  // namespace thaw::merged

// The rules that make one log of two tiers (pure logic, unit-tested):
// where a Fetch the upstream refused goes, the merged log start, and how
// cold batches are handed to a client.
//
// The upstream decides first: only a partition it answered with
// OFFSET_OUT_OF_RANGE is looked up in the table, with the upstream's
// current log start L and high watermark H (asked on the same connection,
// so its ACLs decide that too).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "thaw/kafka/server/topic_log.h"

namespace thaw::merged {

struct TierBounds {
  int64_t upstream_start = 0;  // L: the upstream's log start
  int64_t upstream_end = 0;    // H: its high watermark
  // The table's offsets for the partition; nullopt or empty (log_start ==
  // high_watermark) when it holds nothing.
  std::optional<kafka::server::PartitionOffsets> table;
  bool table_has_data() const { return table && table->high_watermark > table->log_start; }
};

enum class Route {
  kTable,           // the table holds the offset: answer from it
  kSkipToUpstream,  // below L, above what the table holds: a lost range; answer from L
  kOutOfRange,      // below all history or above H: OFFSET_OUT_OF_RANGE, as Kafka
  kRetry,           // the boundary moved under the request: answer empty, the client fetches again
};

Route RouteRefusedFetch(int64_t fetch_offset, const TierBounds& b);

// The lowest offset either tier holds.
int64_t MergedLogStart(int64_t upstream_start, const std::optional<kafka::server::PartitionOffsets>& table);

// Appends to *records the batches (whole record batches v2, in offset order)
// whose base offset is below `stop_offset` (from there the upstream serves),
// while the total stays within `limit`, the first whole when `first_whole`
// (KIP-74). Every batch leaves with its partition leader epoch -1: the
// table's batches carry no epoch the upstream could contradict, so clients
// keep no epoch for positions inside them (KIP-320 validation skips them).
// serve --upstream caches them so (ServeOptions::batch_leader_epoch) and
// they are shared as they are; any other is copied with the epoch set (it
// is outside the batch CRC). Returns the bytes appended.
int64_t AppendColdBatches(const std::vector<std::shared_ptr<const std::string>>& batches, int64_t stop_offset,
                          int64_t limit, bool first_whole, std::vector<std::shared_ptr<const std::string>>* records);

}  // namespace thaw::merged

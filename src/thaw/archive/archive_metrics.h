// What `thaw archive` reports on `--metrics` (docs/metrics.md), per topic and
// partition: records and bytes archived (counted when their commit lands),
// the archived next offset and the topic's end (thaw_archive_lag_records is
// their difference), freshness (now minus the newest archived record's
// timestamp), commits and commit conflicts. The archiver calls it from its
// loop; the gauges are computed when scraped.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "thaw/archive/archive_state.h"

namespace thaw::archive {

class ArchiveMetrics {
 public:
  // Null without `--metrics` (metrics::Global() unset).
  static std::unique_ptr<ArchiveMetrics> Make(std::string table);

  // Records dispatched to the writers (committed with the next commit).
  void Polled(const std::string& topic, int32_t partition, int64_t records, int64_t bytes, int64_t newest_ts_ms);
  // A commit landed: the pending counts become archived, `next` the archived positions.
  void Committed(const TopicOffsets& next, int64_t snapshot_id, size_t data_files);
  void Conflict();
  // The topic's end per partition, as the consumer last heard it.
  void Ends(const std::string& topic, const std::map<int32_t, int64_t>& ends);

  struct State;

 private:
  explicit ArchiveMetrics(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
};

}  // namespace thaw::archive

// What `thaw replay` reports on `--metrics` (docs/metrics.md): records and
// bytes replayed per target topic and partition, counted when a checkpoint
// proves them written; per source partition of the table, the checkpointed
// next offset and, against the end of what the table holds (the snapshot
// being replayed, or followed), thaw_replay_lag_records.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "thaw/records/read_plan.h"

namespace thaw::replay {

class ReplayMetrics {
 public:
  // Null without `--metrics`.
  static std::unique_ptr<ReplayMetrics> Make(std::string table, std::string target_topic);

  void Produced(int32_t target_partition, int64_t bytes) {
    auto& p = pending_[target_partition];
    ++p.first;
    p.second += bytes;
  }
  // The table's end per source partition, from the plan being replayed.
  void TableEnds(const records::ReadPlan& plan);
  // A checkpoint landed: what was produced since is replayed.
  void Checkpointed(const std::map<int32_t, int64_t>& next_offsets);

 private:
  ReplayMetrics(std::string table, std::string target_topic)
      : table_(std::move(table)), topic_(std::move(target_topic)) {}
  std::string table_, topic_;
  std::map<int32_t, std::pair<int64_t, int64_t>> pending_;  // target partition -> (records, bytes)
  std::map<int32_t, int64_t> table_end_;                    // source partition -> end
};

}  // namespace thaw::replay

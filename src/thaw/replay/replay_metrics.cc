#include "thaw/replay/replay_metrics.h"

#include <algorithm>

#include "thaw/metrics/metrics.h"

namespace thaw::replay {

std::unique_ptr<ReplayMetrics> ReplayMetrics::Make(std::string table, std::string target_topic) {
  if (!metrics::Global()) return nullptr;
  return std::unique_ptr<ReplayMetrics>(new ReplayMetrics(std::move(table), std::move(target_topic)));
}

void ReplayMetrics::TableEnds(const records::ReadPlan& plan) {
  for (int32_t p : plan.partitions()) {
    auto w = plan.Watermarks(p);
    if (w.ok() && *w) table_end_[p] = std::max(table_end_[p], (*w)->high);
  }
}

void ReplayMetrics::Checkpointed(const std::map<int32_t, int64_t>& next_offsets) {
  metrics::Metrics* m = metrics::Global();
  if (!m) return;
  for (auto& [partition, counts] : pending_) {
    if (counts.first > 0) m->AddRecords("replayed", topic_, partition, counts.first, counts.second);
    counts = {0, 0};
  }
  for (const auto& [partition, next] : next_offsets) {
    metrics::Labels labels{{"table", table_}, {"partition", std::to_string(partition)}};
    m->Gauge("thaw_replay_next_offset", "The next offset of the table's partition to replay, as checkpointed", labels)
        .Set(static_cast<double>(next));
    if (auto it = table_end_.find(partition); it != table_end_.end()) {
      m->Gauge("thaw_replay_lag_records",
               "The end of what the table holds (the snapshot replayed or followed) minus the checkpointed next "
               "offset, per source partition",
               labels)
          .Set(static_cast<double>(std::max<int64_t>(0, it->second - next)));
    }
  }
}

}  // namespace thaw::replay

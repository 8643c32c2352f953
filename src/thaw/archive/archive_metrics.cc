#include "thaw/archive/archive_metrics.h"

#include <fmt/format.h>

#include <chrono>

#include "thaw/metrics/metrics.h"

namespace thaw::archive {

struct ArchiveMetrics::State {
  metrics::Metrics* metrics = nullptr;
  std::string table;
  std::mutex mu;
  struct Partition {
    int64_t pending_records = 0, pending_bytes = 0, pending_newest = -1;
    int64_t newest_ts = -1;  // newest archived (committed) record's timestamp
    int64_t next = -1;       // archived next offset
    int64_t end = -1;        // the topic's end
  };
  std::map<std::pair<std::string, int32_t>, Partition> partitions;
};

std::unique_ptr<ArchiveMetrics> ArchiveMetrics::Make(std::string table) {
  metrics::Metrics* m = metrics::Global();
  if (!m) return nullptr;
  auto state = std::make_shared<State>();
  state->metrics = m;
  state->table = std::move(table);
  m->OnCollect([state](metrics::Metrics& m) {
    const double now_ms =
        std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch()).count();
    std::lock_guard<std::mutex> lock(state->mu);
    for (const auto& [key, p] : state->partitions) {
      metrics::Labels labels{{"topic", key.first}, {"partition", std::to_string(key.second)}};
      if (p.next >= 0) {
        m.Gauge("thaw_archive_next_offset", "The next offset to archive, as the table's last commit records it",
                labels)
            .Set(static_cast<double>(p.next));
      }
      if (p.end >= 0 && p.next >= 0) {
        m.Gauge("thaw_archive_lag_records", "The topic's end minus the archived next offset", labels)
            .Set(static_cast<double>(std::max<int64_t>(0, p.end - p.next)));
      }
      if (p.end >= 0) {
        m.Gauge("thaw_topic_end_offset", "The source topic's end (high watermark) as the consumer last heard it",
                labels)
            .Set(static_cast<double>(p.end));
      }
      if (p.newest_ts >= 0) {
        m.Gauge("thaw_archive_freshness_seconds",
                "Now minus the timestamp of the newest record archived (committed), per topic and partition", labels)
            .Set(std::max(0.0, (now_ms - static_cast<double>(p.newest_ts)) / 1000.0));
      }
    }
  });
  return std::unique_ptr<ArchiveMetrics>(new ArchiveMetrics(std::move(state)));
}

void ArchiveMetrics::Polled(const std::string& topic, int32_t partition, int64_t records, int64_t bytes,
                            int64_t newest_ts_ms) {
  std::lock_guard<std::mutex> lock(state_->mu);
  auto& p = state_->partitions[{topic, partition}];
  p.pending_records += records;
  p.pending_bytes += bytes;
  p.pending_newest = std::max(p.pending_newest, newest_ts_ms);
}

void ArchiveMetrics::Committed(const TopicOffsets& next, int64_t snapshot_id, size_t data_files) {
  metrics::Metrics& m = *state_->metrics;
  int64_t records = 0;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    for (auto& [key, p] : state_->partitions) {
      if (p.pending_records > 0) {
        m.AddRecords("archived", key.first, key.second, p.pending_records, p.pending_bytes);
        records += p.pending_records;
      }
      p.newest_ts = std::max(p.newest_ts, p.pending_newest);
      p.pending_records = p.pending_bytes = 0;
      p.pending_newest = -1;
    }
    for (const auto& [topic, offsets] : next) {
      for (const auto& [partition, offset] : offsets) state_->partitions[{topic, partition}].next = offset;
    }
  }
  m.Counter("thaw_commits_total", "Snapshots committed to the table", {{"table", state_->table}}).Increment();
  m.Record({std::chrono::system_clock::now(), "commit",
            fmt::format("{}: snapshot {}, {} records in {} data files", state_->table, snapshot_id, records,
                        data_files)});
}

void ArchiveMetrics::Conflict() {
  state_->metrics
      ->Counter("thaw_commit_conflicts_total", "Commits that lost a race with another writer and were re-applied",
                {{"table", state_->table}})
      .Increment();
}

void ArchiveMetrics::Ends(const std::string& topic, const std::map<int32_t, int64_t>& ends) {
  std::lock_guard<std::mutex> lock(state_->mu);
  for (const auto& [partition, end] : ends) state_->partitions[{topic, partition}].end = end;
}

}  // namespace thaw::archive

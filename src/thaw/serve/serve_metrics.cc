#include "thaw/serve/serve_metrics.h"

#include <map>

namespace thaw::serve {

void ReadyState::Set(const std::string& name, Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  states_[name] = std::move(status);
}

Status ReadyState::Get(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = states_.find(name);
  return it == states_.end() ? Status::OK() : it->second;
}

void RegisterTableMetrics(metrics::Metrics& m, TopicRegistry& registry, std::shared_ptr<ReadyState> ready) {
  m.AddReadinessCheck("catalog", [ready]() {
    Status st = ready->Get("catalog");
    if (st.ok()) return st;
    return Status(st.code(), "the last refresh of the tables failed: " + st.message());
  });
  m.AddReadinessCheck("tables", [&registry]() {
    for (const auto& t : registry.topics()) {
      for (int32_t p = 0; p < t->partition_count(); ++p) {
        auto o = t->Offsets(p);
        if (!o.ok()) return Status(o.status().code(), fmt::format("{}-{}: {}", t->name(), p, o.status().message()));
      }
    }
    return Status::OK();
  });
  struct CacheSeen {
    int64_t hits = 0, misses = 0, evictions = 0, unpassed = 0;
    std::map<std::string, int64_t> rows_decoded;  // per topic
  };
  auto seen = std::make_shared<CacheSeen>();
  m.OnCollect([&registry, seen](metrics::Metrics& m) {
    for (const auto& t : registry.topics()) {
      for (int32_t p = 0; p < t->partition_count(); ++p) {
        auto o = t->Offsets(p);
        if (!o.ok()) continue;
        metrics::Labels labels{{"topic", t->name()}, {"partition", std::to_string(p)}, {"tier", "table"}};
        m.Gauge("thaw_log_start_offset", "The lowest offset a tier holds, per topic and partition", labels)
            .Set(static_cast<double>(o->log_start));
        m.Gauge("thaw_end_offset", "One past the highest offset a tier holds (its high watermark)", labels)
            .Set(static_cast<double>(o->high_watermark));
      }
    }
    for (const auto& t : registry.topics()) {
      const auto stats = t->stats();
      const int64_t rows = stats.rows_decoded;
      int64_t& before = seen->rows_decoded[t->name()];
      m.Counter("thaw_rows_decoded_total",
                "Rows decoded from the table to answer Fetches (against thaw_served_records_total: how often a row is "
                "decoded again)",
                {{"topic", t->name()}})
          .Increment(static_cast<double>(std::max<int64_t>(0, rows - before)));
      before = rows;
      m.Gauge("thaw_segment_cursors",
              "Readers of streamed partitions open now, reading or idle where a consumer may continue (each holds "
              "its share of --memory-budget)",
              {{"topic", t->name()}})
          .Set(static_cast<double>(stats.cursors_open));
    }
    if (const auto& cache = registry.cache()) {
      auto s = cache->stats();
      m.Counter("thaw_cache_hits_total", "Batch cache lookups answered from memory", {})
          .Increment(static_cast<double>(std::max<int64_t>(0, s.hits - seen->hits)));
      m.Counter("thaw_cache_misses_total", "Batch cache lookups that read the table", {})
          .Increment(static_cast<double>(std::max<int64_t>(0, s.misses - seen->misses)));
      m.Counter("thaw_cache_evictions_total", "Segments dropped from the batch cache to stay within --cache-size",
                {})
          .Increment(static_cast<double>(std::max<int64_t>(0, s.evictions - seen->evictions)));
      m.Counter("thaw_cache_evictions_unread_total",
                "Segments evicted before consumers had read past them: the cache is smaller than what they read at once",
                {})
          .Increment(static_cast<double>(std::max<int64_t>(0, s.evicted_unpassed - seen->unpassed)));
      seen->unpassed = s.evicted_unpassed;
      seen->hits = s.hits;
      seen->misses = s.misses;
      seen->evictions = s.evictions;
      m.Gauge("thaw_cache_bytes", "Bytes of record batches in the batch cache", {}).Set(static_cast<double>(s.bytes));
      m.Gauge("thaw_cache_capacity_bytes", "The batch cache's capacity (--cache-size)", {})
          .Set(static_cast<double>(cache->capacity()));
    }
  });
}

}  // namespace thaw::serve

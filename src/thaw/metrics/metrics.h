// What a running serve, archive or replay tells an operator: Prometheus
// metrics (prometheus-cpp's core: metric families and the text format), the
// readiness checks behind /readyz, and the recent events the status page
// lists. `--metrics HOST:PORT` makes one Metrics and sets it as the process's
// (SetGlobal); without it Global() is null and every hook is one branch.
//
// Series are found by name and labels through a cache, so a hot path pays
// one hash lookup per update; a caller in a loop may keep the reference.
// Every metric name is documented in docs/metrics.md.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "thaw/common/status.h"

namespace thaw::metrics {

using Labels = std::map<std::string, std::string>;

inline constexpr const char* kFetchLatencyHelp =
    "Time to read what a Fetch returns, by tier (table: reading the table, waits at the end of the log excluded; "
    "upstream: the forwarded Fetch's round trip, which includes the broker's wait for min_bytes)";

// One line of the status page's "recent" lists (commits, errors).
struct Event {
  std::chrono::system_clock::time_point time;
  std::string kind;  // "commit", "error", "warning"
  std::string text;  // never a secret: log lines are already free of them
};

class Metrics {
 public:
  // `face`: serve, archive or replay (the `thaw_info` series and the page's title).
  static std::shared_ptr<Metrics> Make(std::string face);

  const std::string& face() const { return face_; }
  prometheus::Registry& registry() { return *registry_; }

  prometheus::Counter& Counter(std::string_view name, std::string_view help, const Labels& labels);
  prometheus::Gauge& Gauge(std::string_view name, std::string_view help, const Labels& labels);
  // Latency buckets from 0.5 ms to 30 s.
  prometheus::Histogram& Seconds(std::string_view name, std::string_view help, const Labels& labels);

  // The per-partition counters every face keeps, e.g. ("served", "orders", 3,
  // "table"): thaw_served_records_total / thaw_served_bytes_total.
  void AddRecords(std::string_view verb, std::string_view topic, int32_t partition, int64_t records, int64_t bytes,
                  std::string_view tier = {});
  // thaw_errors_total{kind}; kinds are short words (e.g. "fetch", "commit",
  // "log_error").
  void CountError(std::string_view kind);

  // Called before each scrape and status-page sample, to set gauges whose
  // values are read rather than pushed (lag against group commits, say).
  void OnCollect(std::function<void(Metrics&)> fn);
  // The same for the whole process's life: ClearHooks keeps these.
  void AddProcessHook(std::function<void(Metrics&)> fn);
  void RunCollectHooks();
  // Drops every collect hook and readiness check (waiting for a scrape that
  // runs them): called before what they reference goes away.
  void ClearHooks();
  // The text format of everything registered (runs the hooks first).
  std::string Scrape();

  // /readyz: each check returns OK or why the process is not ready.
  void AddReadinessCheck(std::string name, std::function<Status()> check);
  std::vector<std::pair<std::string, Status>> Readiness();

  void Record(Event event);
  std::vector<Event> Recent(std::string_view kind, size_t max) const;

  std::chrono::system_clock::time_point started() const { return started_; }

 private:
  explicit Metrics(std::string face);
  template <typename M, typename Builder, typename... Args>
  M& Find(std::unordered_map<std::string, M*>* cache, std::unordered_map<std::string, prometheus::Family<M>*>* families,
          Builder build, std::string_view name, std::string_view help, const Labels& labels, Args&&... args);

  std::string face_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::chrono::system_clock::time_point started_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, prometheus::Counter*> counters_;
  std::unordered_map<std::string, prometheus::Gauge*> gauges_;
  std::unordered_map<std::string, prometheus::Histogram*> histograms_;
  std::unordered_map<std::string, prometheus::Family<prometheus::Counter>*> counter_families_;
  std::unordered_map<std::string, prometheus::Family<prometheus::Gauge>*> gauge_families_;
  std::unordered_map<std::string, prometheus::Family<prometheus::Histogram>*> histogram_families_;
  std::mutex hooks_mu_;  // held while hooks run: one scrape's hooks at a time
  std::vector<std::function<void(Metrics&)>> hooks_, process_hooks_;
  std::vector<std::pair<std::string, std::function<Status()>>> checks_;
  std::deque<Event> events_;
};

// Clears the hooks when it goes out of scope (ClearHooks), so that none
// outlives what it captured by reference.
class HooksScope {
 public:
  explicit HooksScope(Metrics* m) : m_(m) {}
  ~HooksScope() {
    if (m_) m_->ClearHooks();
  }
  HooksScope(const HooksScope&) = delete;
  HooksScope& operator=(const HooksScope&) = delete;

 private:
  Metrics* m_;
};

// The process's metrics: null unless `--metrics` was given.
Metrics* Global();
void SetGlobal(std::shared_ptr<Metrics> metrics);

// Counts warnings and errors the logger writes (thaw_errors_total{kind=
// "log_warning"|"log_error"}) and keeps the last ones for the status page.
void ObserveLog(Metrics* metrics);

}  // namespace thaw::metrics

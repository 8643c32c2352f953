#include "thaw/metrics/metrics.h"

#include <prometheus/text_serializer.h>

#include <atomic>
#include <utility>

#include "thaw/common/log.h"

namespace thaw::metrics {

namespace {

constexpr size_t kMaxEvents = 200;

std::shared_ptr<Metrics> g_metrics;
std::atomic<Metrics*> g_raw{nullptr};

std::string Key(std::string_view name, const Labels& labels) {
  std::string key(name);
  for (const auto& [k, v] : labels) {
    key += '\x1f';
    key += k;
    key += '=';
    key += v;
  }
  return key;
}

const prometheus::Histogram::BucketBoundaries& LatencyBuckets() {
  static const prometheus::Histogram::BucketBoundaries buckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                                  0.1,    0.25,  0.5,    1,     2.5,  5,     10, 30};
  return buckets;
}

}  // namespace

std::shared_ptr<Metrics> Metrics::Make(std::string face) {
  auto m = std::shared_ptr<Metrics>(new Metrics(std::move(face)));
  m->Gauge("thaw_info", "Always 1; labels say which face of Thaw this process runs", {{"face", m->face_}}).Set(1);
  m->Gauge("thaw_start_time_seconds", "When this process started, in seconds since the epoch", {})
      .Set(std::chrono::duration<double>(m->started_.time_since_epoch()).count());
  return m;
}

Metrics::Metrics(std::string face)
    : face_(std::move(face)),
      registry_(std::make_shared<prometheus::Registry>()),
      started_(std::chrono::system_clock::now()) {}

template <typename M, typename Builder, typename... Args>
M& Metrics::Find(std::unordered_map<std::string, M*>* cache,
                 std::unordered_map<std::string, prometheus::Family<M>*>* families, Builder build,
                 std::string_view name, std::string_view help, const Labels& labels, Args&&... args) {
  std::string key = Key(name, labels);
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = cache->find(key); it != cache->end()) return *it->second;
  auto fit = families->find(std::string(name));
  if (fit == families->end()) {
    auto& family = build().Name(std::string(name)).Help(std::string(help)).Register(*registry_);
    fit = families->emplace(std::string(name), &family).first;
  }
  M& metric = fit->second->Add(labels, std::forward<Args>(args)...);
  cache->emplace(std::move(key), &metric);
  return metric;
}

prometheus::Counter& Metrics::Counter(std::string_view name, std::string_view help, const Labels& labels) {
  return Find(&counters_, &counter_families_, prometheus::BuildCounter, name, help, labels);
}

prometheus::Gauge& Metrics::Gauge(std::string_view name, std::string_view help, const Labels& labels) {
  return Find(&gauges_, &gauge_families_, prometheus::BuildGauge, name, help, labels);
}

prometheus::Histogram& Metrics::Seconds(std::string_view name, std::string_view help, const Labels& labels) {
  return Find(&histograms_, &histogram_families_, prometheus::BuildHistogram, name, help, labels, LatencyBuckets());
}

void Metrics::AddRecords(std::string_view verb, std::string_view topic, int32_t partition, int64_t records,
                         int64_t bytes, std::string_view tier) {
  Labels labels{{"topic", std::string(topic)}, {"partition", std::to_string(partition)}};
  if (!tier.empty()) labels.emplace("tier", std::string(tier));
  std::string records_name = "thaw_" + std::string(verb) + "_records_total";
  std::string bytes_name = "thaw_" + std::string(verb) + "_bytes_total";
  Counter(records_name, "Records " + std::string(verb) + ", per topic and partition", labels)
      .Increment(static_cast<double>(records));
  Counter(bytes_name, "Bytes of keys, values and headers " + std::string(verb) + ", per topic and partition", labels)
      .Increment(static_cast<double>(bytes));
}

void Metrics::CountError(std::string_view kind) {
  Counter("thaw_errors_total", "Errors by kind", {{"kind", std::string(kind)}}).Increment();
}

void Metrics::OnCollect(std::function<void(Metrics&)> fn) {
  std::lock_guard<std::mutex> lock(hooks_mu_);
  hooks_.push_back(std::move(fn));
}

void Metrics::AddProcessHook(std::function<void(Metrics&)> fn) {
  std::lock_guard<std::mutex> lock(hooks_mu_);
  process_hooks_.push_back(std::move(fn));
}

void Metrics::RunCollectHooks() {
  std::lock_guard<std::mutex> lock(hooks_mu_);
  for (auto& hook : process_hooks_) hook(*this);
  for (auto& hook : hooks_) hook(*this);
}

void Metrics::ClearHooks() {
  std::lock_guard<std::mutex> lock(hooks_mu_);
  hooks_.clear();
  checks_.clear();
}

std::string Metrics::Scrape() {
  RunCollectHooks();
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

void Metrics::AddReadinessCheck(std::string name, std::function<Status()> check) {
  std::lock_guard<std::mutex> lock(hooks_mu_);
  checks_.emplace_back(std::move(name), std::move(check));
}

std::vector<std::pair<std::string, Status>> Metrics::Readiness() {
  std::lock_guard<std::mutex> lock(hooks_mu_);
  std::vector<std::pair<std::string, Status>> out;
  for (auto& [name, check] : checks_) out.emplace_back(name, check());
  return out;
}

void Metrics::Record(Event event) {
  std::lock_guard<std::mutex> lock(mu_);
  events_.push_back(std::move(event));
  while (events_.size() > kMaxEvents) events_.pop_front();
}

std::vector<Event> Metrics::Recent(std::string_view kind, size_t max) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Event> out;
  for (auto it = events_.rbegin(); it != events_.rend() && out.size() < max; ++it) {
    if (it->kind == kind) out.push_back(*it);
  }
  return out;
}

Metrics* Global() { return g_raw.load(std::memory_order_acquire); }

void SetGlobal(std::shared_ptr<Metrics> metrics) {
  g_raw.store(metrics.get(), std::memory_order_release);
  g_metrics = std::move(metrics);
}

namespace {

void LogObserver(log::Level level, std::string_view message) {
  if (level != log::Level::kWarn && level != log::Level::kError) return;
  Metrics* m = Global();
  if (!m) return;
  bool error = level == log::Level::kError;
  m->CountError(error ? "log_error" : "log_warning");
  m->Record({std::chrono::system_clock::now(), error ? "error" : "warning", std::string(message.substr(0, 500))});
}

}  // namespace

void ObserveLog(Metrics* metrics) { log::SetObserver(metrics ? &LogObserver : nullptr); }

}  // namespace thaw::metrics

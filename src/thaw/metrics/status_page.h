// The status page at `/` on the metrics listener: one HTML document, inline
// CSS and SVG, no script and no external asset, so it renders behind any
// proxy and in a terminal browser. Per topic (or table) and partition: the
// position in each tier, lag and freshness, throughput, each over the last
// hour as a small line chart; then the last commits and the last errors.
//
// The charts come from samples the endpoint takes every `interval` (default
// 10 s; 360 samples = one hour) of the gauges named in kChartedGauges and
// of the rates of the *_records_total counters.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "thaw/metrics/metrics.h"

namespace thaw::metrics {

class StatusHistory {
 public:
  explicit StatusHistory(size_t capacity = 360) : capacity_(capacity) {}

  // Reads the current values (running the collect hooks) and appends one
  // point to every charted series.
  void Sample(Metrics& metrics);
  // The page (HTML).
  std::string Render(Metrics& metrics) const;

  // One charted series: (family, labels) → points (seconds since the epoch, value).
  struct Series {
    std::string family;
    std::map<std::string, std::string> labels;
    std::deque<std::pair<double, double>> points;
    double last_counter = -1;  // for rates
    double last_time = 0;
  };

 private:
  size_t capacity_;
  mutable std::mutex mu_;
  std::map<std::string, Series> series_;  // key: family + labels
  double last_sample_ = 0;                // seconds since the epoch
};

// An SVG line chart of `points` (at most `width` px wide), with the last
// value printed; exposed for the unit test.
std::string SvgLineChart(const std::deque<std::pair<double, double>>& points, const std::string& title,
                         const std::string& unit);

}  // namespace thaw::metrics

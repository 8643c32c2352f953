#include "thaw/metrics/status_page.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <prometheus/metric_family.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <set>

namespace thaw::metrics {

namespace {

// Gauges charted as they are, with the unit their value is in.
struct Charted {
  const char* family;
  const char* title;
  const char* unit;
};
constexpr Charted kChartedGauges[] = {
    {"thaw_archive_lag_records", "archive lag", "records"},
    {"thaw_archive_freshness_seconds", "freshness", "s"},
    {"thaw_replay_lag_records", "replay lag", "records"},
    {"thaw_consumer_lag_records", "consumer lag", "records"},
    {"thaw_tiered_archive_margin_records", "archive margin over retention", "records"},
    {"thaw_log_start_offset", "log start", ""},
    {"thaw_end_offset", "end offset", ""},
};

const Charted* FindCharted(const std::string& family) {
  for (const auto& c : kChartedGauges) {
    if (family == c.family) return &c;
  }
  return nullptr;
}

bool IsRecordsCounter(const std::string& family) {
  static const std::string suffix = "_records_total";
  return family.size() > suffix.size() && family.compare(family.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string Html(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Number(double v) {
  if (std::isnan(v)) return "–";
  if (std::fabs(v) >= 1e6) return fmt::format("{:.3g}", v);
  if (v == std::floor(v)) return fmt::format("{:.0f}", v);
  return fmt::format("{:.2f}", v);
}

std::string UtcTime(std::chrono::system_clock::time_point t) {
  std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:%Y-%m-%d %H:%M:%S} UTC", tm);
}

// Rows of the page: what identifies a partition's series.
std::string RowKey(const std::map<std::string, std::string>& labels) {
  std::string key;
  for (const char* name : {"topic", "table", "group", "partition"}) {
    if (auto it = labels.find(name); it != labels.end()) key += std::string(name) + "=" + it->second + " ";
  }
  return key;
}

std::string SeriesLabel(const StatusHistory::Series& s) {
  std::string extra;
  for (const auto& [k, v] : s.labels) {
    if (k == "topic" || k == "table" || k == "partition" || k == "group") continue;
    extra += (extra.empty() ? "" : ", ") + k + "=" + v;
  }
  return extra;
}

}  // namespace

std::string SvgLineChart(const std::deque<std::pair<double, double>>& points, const std::string& title,
                         const std::string& unit) {
  constexpr double kW = 240, kH = 48, kPad = 2;
  double t0 = points.empty() ? 0 : points.front().first, t1 = points.empty() ? 1 : points.back().first;
  double lo = 0, hi = 0;
  for (const auto& [t, v] : points) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  const double max_seen = points.empty() ? 0 : hi;
  if (hi == lo) hi = lo + 1;
  if (t1 <= t0) t1 = t0 + 1;
  std::string pts;
  for (const auto& [t, v] : points) {
    double x = kPad + (t - t0) / (t1 - t0) * (kW - 2 * kPad);
    double y = kH - kPad - (v - lo) / (hi - lo) * (kH - 2 * kPad);
    pts += fmt::format("{}{:.1f},{:.1f}", pts.empty() ? "" : " ", x, y);
  }
  std::string last = points.empty() ? "–" : Number(points.back().second) + (unit.empty() ? "" : " " + unit);
  return fmt::format(
      "<figure class=\"chart\"><figcaption>{} <b>{}</b></figcaption>"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "data-points=\"{}\" role=\"img\" aria-label=\"{}\">"
      "<rect width=\"{}\" height=\"{}\" fill=\"#f6f8fa\"/>"
      "<polyline fill=\"none\" stroke=\"#0969da\" stroke-width=\"1.5\" points=\"{}\"/></svg>"
      "<small>max {} · {} points</small></figure>",
      Html(title), Html(last), kW, kH, kW, kH, points.size(), Html(title), kW, kH, pts, Number(max_seen), points.size());
}

void StatusHistory::Sample(Metrics& metrics) {
  metrics.RunCollectHooks();
  auto families = metrics.registry().Collect();
  double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& family : families) {
    bool gauge = FindCharted(family.name) != nullptr;
    bool rate = IsRecordsCounter(family.name);
    if (!gauge && !rate) continue;
    for (const auto& m : family.metric) {
      std::map<std::string, std::string> labels;
      std::string key = family.name;
      for (const auto& l : m.label) {
        labels[l.name] = l.value;
        key += "|" + l.name + "=" + l.value;
      }
      Series& s = series_[key];
      if (s.family.empty()) {
        s.family = family.name;
        s.labels = std::move(labels);
      }
      double value;
      if (gauge) {
        value = m.gauge.value;
      } else {
        double c = m.counter.value;
        if (s.last_counter < 0) {
          // A counter that appeared since the last sample started at 0 then;
          // in the very first sample it has no rate yet.
          if (last_sample_ <= 0) {
            s.last_counter = c;
            s.last_time = now;
            continue;
          }
          s.last_counter = 0;
          s.last_time = last_sample_;
        }
        value = now > s.last_time ? (c - s.last_counter) / (now - s.last_time) : 0;
        s.last_counter = c;
        s.last_time = now;
      }
      s.points.emplace_back(now, value);
      while (s.points.size() > capacity_) s.points.pop_front();
    }
  }
  last_sample_ = now;
}

std::string StatusHistory::Render(Metrics& metrics) const {
  auto readiness = metrics.Readiness();
  bool ready = std::all_of(readiness.begin(), readiness.end(), [](const auto& r) { return r.second.ok(); });
  std::string out;
  out += fmt::format(
      "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>thaw {}</title>"
      "<meta http-equiv=\"refresh\" content=\"30\">"
      "<style>body{{font:14px system-ui,sans-serif;margin:1.5em;color:#1f2328}}"
      "h1{{font-size:1.4em}}h2{{font-size:1.1em;margin-top:1.5em}}"
      "table{{border-collapse:collapse}}td,th{{border-bottom:1px solid #d0d7de;padding:4px 8px;text-align:left;"
      "vertical-align:top}}figure{{display:inline-block;margin:0 8px 4px 0}}figcaption{{font-size:12px}}"
      ".ok{{color:#1a7f37}}.bad{{color:#cf222e}}small{{color:#656d76}}</style></head><body>"
      "<h1>thaw {}</h1><p>started {} · <span class=\"{}\" id=\"ready\">{}</span> · "
      "<a href=\"/metrics\">/metrics</a> · <a href=\"/readyz\">/readyz</a></p>",
      Html(metrics.face()), Html(metrics.face()), UtcTime(metrics.started()), ready ? "ok" : "bad",
      ready ? "ready" : "not ready");
  if (!ready) {
    out += "<ul>";
    for (const auto& [name, st] : readiness) {
      if (!st.ok()) out += fmt::format("<li class=\"bad\">{}: {}</li>", Html(name), Html(st.message()));
    }
    out += "</ul>";
  }

  std::lock_guard<std::mutex> lock(mu_);
  // Group the series into rows by topic / table / group and partition.
  std::map<std::string, std::vector<const Series*>> rows;
  for (const auto& [key, s] : series_) rows[RowKey(s.labels)].push_back(&s);
  out += "<h2>Partitions</h2>";
  if (rows.empty()) out += "<p><small>No partition has been seen yet.</small></p>";
  out += "<table id=\"partitions\"><tr><th>partition</th><th>over the last hour</th></tr>";
  for (const auto& [row, list] : rows) {
    out += fmt::format("<tr class=\"partition\"><td>{}</td><td>", Html(row.empty() ? "(process)" : row));
    for (const Series* s : list) {
      std::string title, unit;
      if (const Charted* c = FindCharted(s->family)) {
        title = c->title;
        unit = c->unit;
      } else {
        title = s->family.substr(5, s->family.size() - 5 - 14) + " records/s";  // thaw_X_records_total
      }
      std::string extra = SeriesLabel(*s);
      if (!extra.empty()) title += " (" + extra + ")";
      out += SvgLineChart(s->points, title, unit);
    }
    out += "</td></tr>";
  }
  out += "</table>";

  auto list = [&](const char* heading, const char* id, std::vector<Event> events) {
    out += fmt::format("<h2>{}</h2><ul id=\"{}\">", heading, id);
    if (events.empty()) out += "<li><small>none</small></li>";
    for (const auto& e : events) {
      out += fmt::format("<li><small>{}</small> {}</li>", UtcTime(e.time), Html(e.text));
    }
    out += "</ul>";
  };
  list("Last commits", "commits", metrics.Recent("commit", 10));
  auto errors = metrics.Recent("error", 10);
  auto warnings = metrics.Recent("warning", 10);
  errors.insert(errors.end(), warnings.begin(), warnings.end());
  std::sort(errors.begin(), errors.end(), [](const Event& a, const Event& b) { return a.time > b.time; });
  if (errors.size() > 10) errors.resize(10);
  list("Last errors and warnings", "errors", std::move(errors));
  out += "</body></html>\n";
  return out;
}

}  // namespace thaw::metrics

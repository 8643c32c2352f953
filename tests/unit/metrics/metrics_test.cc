#include "thaw/metrics/metrics.h"

#include <gtest/gtest.h>

#include <regex>
#include <thread>

#include "thaw/kafka/protocol/record_batch.h"
#include "thaw/metrics/endpoint.h"
#include "thaw/metrics/record_counts.h"
#include "thaw/metrics/status_page.h"

namespace thaw::metrics {
namespace {

std::string Batch(int64_t base, int n) {
  kafka::RecordBatch owner;
  std::vector<std::string> values(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    values[static_cast<size_t>(i)] = "v" + std::to_string(base + i);
    kafka::Record r;
    r.offset = base + i;
    r.timestamp_ms = 1000 + base + i;
    r.value = values[static_cast<size_t>(i)];
    owner.records.push_back(r);
  }
  std::string out;
  EXPECT_TRUE(kafka::AppendRecordBatch(owner.records, owner, kafka::BatchOptions{}, &out).ok());
  return out;
}

TEST(RecordCounts, CountsRecordsOfWholeBatchesOnly) {
  std::string a = Batch(0, 3), b = Batch(3, 5);
  EXPECT_EQ(BatchRecordCount(a), 3);
  EXPECT_EQ(RecordsInBatches(a + b), 8);
  // A partial trailing batch (a Fetch cut at max_bytes) is not counted.
  EXPECT_EQ(RecordsInBatches(a + b.substr(0, b.size() - 1)), 3);
  EXPECT_EQ(RecordsInBatches(std::string(5, '\0')), 0);
  EXPECT_EQ(BatchRecordCount("short"), 0);
}

TEST(Metrics, CountersBySeriesInTheTextFormat) {
  auto m = Metrics::Make("serve");
  m->AddRecords("served", "orders", 2, 10, 1000, "table");
  m->AddRecords("served", "orders", 2, 5, 500, "table");
  m->AddRecords("served", "orders", 2, 7, 700, "upstream");
  m->CountError("fetch");
  const std::string text = m->Scrape();
  EXPECT_NE(text.find("thaw_served_records_total{partition=\"2\",tier=\"table\",topic=\"orders\"} 15"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("thaw_served_bytes_total{partition=\"2\",tier=\"upstream\",topic=\"orders\"} 700"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("thaw_errors_total{kind=\"fetch\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("thaw_info{face=\"serve\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("# TYPE thaw_served_records_total counter"), std::string::npos) << text;
}

TEST(Metrics, CollectHooksRunBeforeEachScrapeUntilCleared) {
  auto m = Metrics::Make("archive");
  int calls = 0;
  m->OnCollect([&calls](Metrics& m) { m.Gauge("thaw_test_gauge", "test", {}).Set(++calls); });
  EXPECT_NE(m->Scrape().find("thaw_test_gauge 1"), std::string::npos);
  EXPECT_NE(m->Scrape().find("thaw_test_gauge 2"), std::string::npos);
  m->ClearHooks();
  EXPECT_NE(m->Scrape().find("thaw_test_gauge 2"), std::string::npos);
  EXPECT_EQ(calls, 2);
}

TEST(Endpoint, ParsesListenAddresses) {
  auto a = ParseListen("9404");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 9404);
  auto b = ParseListen("0.0.0.0:80");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->host, "0.0.0.0");
  auto c = ParseListen("[::1]:9");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->host, "::1");
  EXPECT_FALSE(ParseListen("host:").ok());
  EXPECT_FALSE(ParseListen("70000").ok());
  EXPECT_NE(ParseListen("x:y").status().message().find("--metrics 'x:y'"), std::string::npos);
}

TEST(Endpoint, AnswersEachPath) {
  auto m = Metrics::Make("replay");
  StatusHistory history;
  EXPECT_EQ(Answer(*m, history, "GET", "/healthz").status, 200);
  EXPECT_EQ(Answer(*m, history, "GET", "/readyz").status, 200);
  EXPECT_EQ(Answer(*m, history, "POST", "/metrics").status, 405);
  EXPECT_EQ(Answer(*m, history, "GET", "/nope").status, 404);
  auto metrics = Answer(*m, history, "GET", "/metrics?x=1");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.content_type.find("version=0.0.4"), std::string::npos);
  m->AddReadinessCheck("catalog", [] { return Status::IOError("connection refused"); });
  auto ready = Answer(*m, history, "GET", "/readyz");
  EXPECT_EQ(ready.status, 503);
  EXPECT_EQ(ready.body, "catalog: connection refused\n");
  auto page = Answer(*m, history, "GET", "/");
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.body.find("not ready"), std::string::npos);
}

int CountMatches(const std::string& text, const std::string& re) {
  std::regex r(re);
  return static_cast<int>(std::distance(std::sregex_iterator(text.begin(), text.end(), r), std::sregex_iterator()));
}

TEST(StatusHistory, ChartsGaugesAndRatesWithOnePointPerSample) {
  auto m = Metrics::Make("archive");
  StatusHistory history(4);  // keeps the last 4 samples
  auto& lag = m->Gauge("thaw_archive_lag_records", "lag", {{"topic", "t"}, {"partition", "0"}});
  for (int i = 0; i < 6; ++i) {
    lag.Set(100 - i);
    m->AddRecords("archived", "t", 0, 10, 100);
    history.Sample(*m);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  m->Record({std::chrono::system_clock::now(), "commit", "ns.t: snapshot 42, <b>3</b> records"});
  const std::string page = history.Render(*m);
  // Two charts in the partition's row: the lag (4 points, capped) and the
  // archive rate (4: the first sample of a counter has no rate, then capped).
  EXPECT_EQ(CountMatches(page, "<polyline"), 2) << page;
  EXPECT_EQ(CountMatches(page, "data-points=\"4\""), 2) << page;
  EXPECT_NE(page.find("archive lag <b>95 records</b>"), std::string::npos) << page;
  EXPECT_NE(page.find("archived records/s"), std::string::npos) << page;
  EXPECT_NE(page.find("topic=t partition=0"), std::string::npos) << page;
  // Event text is escaped.
  EXPECT_NE(page.find("snapshot 42, &lt;b&gt;3&lt;/b&gt; records"), std::string::npos) << page;
  EXPECT_EQ(page.find("http://") == std::string::npos || page.find("<script") == std::string::npos, true);
  EXPECT_EQ(page.find("<script"), std::string::npos);
}

TEST(StatusHistory, LineChartScalesItsPointsIntoTheBox) {
  std::deque<std::pair<double, double>> pts = {{0, 0}, {5, 10}, {10, 5}};
  std::string svg = SvgLineChart(pts, "lag", "records");
  EXPECT_NE(svg.find("points=\"2.0,46.0 120.0,2.0 238.0,24.0\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("lag <b>5 records</b>"), std::string::npos) << svg;
  EXPECT_NE(SvgLineChart({}, "empty", "").find("data-points=\"0\""), std::string::npos);
}

}  // namespace
}  // namespace thaw::metrics

// A librdkafka consumer that reads a topic to its end, for bench/serve_bench.sh:
// the same client against `thaw serve` and against a Kafka broker. Prints one
// JSON line.
//
//   consume_bench --brokers HOST:PORT --topic T read
//       one consumer assigns every partition from the beginning and reads until
//       every partition reports EOF at its high watermark (queried first):
//       {"mode":"read","records":N,"bytes":B,"seconds":S,"mb_s":M,"errors":E}
//       bytes = key + value + header keys + header values (as replay_bench counts)
//   consume_bench --brokers HOST:PORT --topic T seek [--samples K]
//       K times (default 5): a new consumer, connected (metadata fetched), is
//       assigned partition i % partitions at the middle of that partition
//       (fraction 0.2 + 0.6 * i / K of its range); the time from assign() to
//       the first record: {"mode":"seek","first_record_ms":[...],"median_ms":M}
//   consume_bench --brokers HOST:PORT --topic T concurrent [--consumers C] [--fraction F]
//   ... [-X name=value]...   librdkafka properties on every consumer (e.g. security.protocol=ssl)
//       C consumers (default 50), one thread each, all reading the same range:
//       every partition from its beginning for F (default 0.04) of its records;
//       aggregate bytes over the wall time from the first assign to the last
//       consumer done: {"mode":"concurrent","consumers":C,"records":N,"bytes":B,
//       "seconds":S,"mb_s":M,"errors":E}
//
// Errors counted: every consumer error event except partition EOF; a consumer
// that does not finish within --timeout seconds (default 600) counts one error
// and stops. Exit status 0 even with errors (the script reports them); 2 on
// bad usage or when the topic cannot be described.
#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using Clock = std::chrono::steady_clock;

namespace {

struct Args {
  std::string brokers, topic, mode;
  std::vector<std::pair<std::string, std::string>> properties;  // -X name=value (e.g. TLS)
  int samples = 5, consumers = 50;
  double fraction = 0.04, timeout = 600;
};

struct Range {
  int32_t partition;
  int64_t low, high;  // read [start, end)
  int64_t start, end;
};

rd_kafka_t* NewConsumer(const Args& a, const char* group_suffix, bool small_queue) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  auto set = [&](const char* k, const std::string& v) {
    if (rd_kafka_conf_set(conf, k, v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
      std::fprintf(stderr, "consume_bench: %s=%s: %s\n", k, v.c_str(), err);
      std::exit(2);
    }
  };
  set("bootstrap.servers", a.brokers);
  set("group.id", std::string("consume-bench-") + group_suffix);
  set("enable.auto.commit", "false");
  set("enable.auto.offset.store", "false");
  set("enable.partition.eof", "true");
  set("fetch.message.max.bytes", "1048576");
  set("check.crcs", "false");
  // 50 consumers x 16 partitions: keep each one's prefetch bounded.
  if (small_queue) set("queued.max.messages.kbytes", "8192");
  for (const auto& [k, v] : a.properties) set(k.c_str(), v);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (rk == nullptr) {
    std::fprintf(stderr, "consume_bench: rd_kafka_new: %s\n", err);
    std::exit(2);
  }
  return rk;
}

std::vector<Range> Describe(const Args& a) {
  rd_kafka_t* rk = NewConsumer(a, "describe", true);
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, a.topic.c_str(), nullptr);
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t e = rd_kafka_metadata(rk, 0, rkt, &md, 30000);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR || md->topic_cnt != 1 || md->topics[0].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    std::fprintf(stderr, "consume_bench: cannot describe topic %s at %s: %s\n", a.topic.c_str(), a.brokers.c_str(),
                 rd_kafka_err2str(e != RD_KAFKA_RESP_ERR_NO_ERROR ? e : md->topics[0].err));
    std::exit(2);
  }
  std::vector<Range> out;
  for (int i = 0; i < md->topics[0].partition_cnt; i++) {
    Range r{md->topics[0].partitions[i].id, 0, 0, 0, 0};
    e = rd_kafka_query_watermark_offsets(rk, a.topic.c_str(), r.partition, &r.low, &r.high, 30000);
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
      std::fprintf(stderr, "consume_bench: watermarks of %s/%d: %s\n", a.topic.c_str(), r.partition,
                   rd_kafka_err2str(e));
      std::exit(2);
    }
    r.start = r.low;
    r.end = r.high;
    out.push_back(r);
  }
  std::sort(out.begin(), out.end(), [](const Range& x, const Range& y) { return x.partition < y.partition; });
  rd_kafka_metadata_destroy(md);
  rd_kafka_topic_destroy(rkt);
  rd_kafka_destroy(rk);
  return out;
}

struct ReadResult {
  int64_t records = 0, bytes = 0, errors = 0;
  Clock::time_point first{}, done{};
};

int64_t RecordBytes(const rd_kafka_message_t* m) {
  int64_t n = static_cast<int64_t>(m->len) + static_cast<int64_t>(m->key_len);
  rd_kafka_headers_t* hs = nullptr;
  if (rd_kafka_message_headers(m, &hs) == RD_KAFKA_RESP_ERR_NO_ERROR && hs != nullptr) {
    const char* name;
    const void* val;
    size_t size;
    for (size_t i = 0; rd_kafka_header_get_all(hs, i, &name, &val, &size) == RD_KAFKA_RESP_ERR_NO_ERROR; i++) {
      n += static_cast<int64_t>(std::strlen(name) + size);
    }
  }
  return n;
}

// Stops fetching a partition that reached its end (concurrent mode reads a
// prefix of each partition: what librdkafka would prefetch beyond it is not
// counted, so it should not be fetched either).
void Pause(rd_kafka_t* rk, const std::string& topic, int32_t partition) {
  rd_kafka_topic_partition_list_t* l = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(l, topic.c_str(), partition);
  rd_kafka_pause_partitions(rk, l);
  rd_kafka_topic_partition_list_destroy(l);
}

// Reads every range [start, end) with one consumer.
ReadResult ReadRanges(const Args& a, rd_kafka_t* rk, const std::vector<Range>& ranges, bool stop_at_first) {
  ReadResult res;
  rd_kafka_topic_partition_list_t* tl = rd_kafka_topic_partition_list_new(static_cast<int>(ranges.size()));
  std::vector<int64_t> end_of(
      1 + std::max_element(ranges.begin(), ranges.end(), [](auto& x, auto& y) { return x.partition < y.partition; })
              ->partition,
      -1);
  size_t pending = 0;
  for (const Range& r : ranges) {
    end_of[r.partition] = r.end;
    if (r.end > r.start) {
      rd_kafka_topic_partition_list_add(tl, a.topic.c_str(), r.partition)->offset = r.start;
      pending++;
    }
  }
  const auto deadline = Clock::now() + std::chrono::duration<double>(a.timeout);
  rd_kafka_assign(rk, tl);
  rd_kafka_topic_partition_list_destroy(tl);
  std::vector<bool> finished(end_of.size(), false);
  while (pending > 0) {
    if (Clock::now() > deadline) {
      res.errors++;
      std::fprintf(stderr, "consume_bench: timeout with %zu partitions unfinished\n", pending);
      break;
    }
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 200);
    if (m == nullptr) continue;
    const int32_t p = m->partition;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      if (p >= 0 && p < static_cast<int32_t>(end_of.size()) && !finished[p] && m->offset >= end_of[p]) {
        finished[p] = true;
        pending--;
      }
    } else if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (res.errors++ < 5) std::fprintf(stderr, "consume_bench: %s\n", rd_kafka_message_errstr(m));
    } else if (p >= 0 && p < static_cast<int32_t>(end_of.size()) && !finished[p]) {
      if (res.records == 0) res.first = Clock::now();
      if (m->offset < end_of[p]) {
        res.records++;
        res.bytes += RecordBytes(m);
      }
      if (m->offset + 1 >= end_of[p]) {
        finished[p] = true;
        pending--;
        Pause(rk, a.topic, p);
      }
      if (stop_at_first) {
        rd_kafka_message_destroy(m);
        break;
      }
    }
    rd_kafka_message_destroy(m);
  }
  res.done = Clock::now();
  rd_kafka_assign(rk, nullptr);
  return res;
}

void Connect(rd_kafka_t* rk, const Args& a) {
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, a.topic.c_str(), nullptr);
  const rd_kafka_metadata_t* md = nullptr;
  if (rd_kafka_metadata(rk, 0, rkt, &md, 30000) == RD_KAFKA_RESP_ERR_NO_ERROR) rd_kafka_metadata_destroy(md);
  rd_kafka_topic_destroy(rkt);
}

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; i++) {
    std::string k = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "consume_bench: %s needs a value\n", k.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (k == "--brokers")
      a.brokers = next();
    else if (k == "--topic")
      a.topic = next();
    else if (k == "--samples")
      a.samples = std::stoi(next());
    else if (k == "--consumers")
      a.consumers = std::stoi(next());
    else if (k == "--fraction")
      a.fraction = std::stod(next());
    else if (k == "--timeout")
      a.timeout = std::stod(next());
    else if (k == "-X") {
      const std::string kv = next();
      const size_t eq = kv.find('=');
      if (eq == std::string::npos) {
        std::fprintf(stderr, "consume_bench: -X %s must be name=value\n", kv.c_str());
        return 2;
      }
      a.properties.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
    else if (a.mode.empty() && k[0] != '-')
      a.mode = k;
    else {
      std::fprintf(stderr, "consume_bench: unknown argument %s\n", k.c_str());
      return 2;
    }
  }
  if (a.brokers.empty() || a.topic.empty() || (a.mode != "read" && a.mode != "seek" && a.mode != "concurrent")) {
    std::fprintf(stderr, "usage: consume_bench --brokers HOST:PORT --topic T read|seek|concurrent [options]\n");
    return 2;
  }
  std::vector<Range> ranges = Describe(a);

  if (a.mode == "read") {
    rd_kafka_t* rk = NewConsumer(a, "read", false);
    Connect(rk, a);
    auto t0 = Clock::now();
    ReadResult r = ReadRanges(a, rk, ranges, false);
    rd_kafka_destroy(rk);
    double s = Seconds(t0, r.done);
    std::printf("{\"mode\":\"read\",\"records\":%lld,\"bytes\":%lld,\"seconds\":%.3f,\"mb_s\":%.1f,\"errors\":%lld}\n",
                (long long)r.records, (long long)r.bytes, s, r.bytes / s / 1e6, (long long)r.errors);
    return 0;
  }

  if (a.mode == "seek") {
    std::vector<double> ms;
    int64_t errors = 0;
    for (int i = 0; i < a.samples; i++) {
      Range r = ranges[i % ranges.size()];
      double f = 0.2 + 0.6 * i / std::max(1, a.samples);
      r.start = r.low + static_cast<int64_t>((r.high - r.low) * f);
      r.end = r.high;
      rd_kafka_t* rk = NewConsumer(a, "seek", false);
      Connect(rk, a);
      auto t0 = Clock::now();
      ReadResult res = ReadRanges(a, rk, {r}, true);
      rd_kafka_destroy(rk);
      errors += res.errors;
      if (res.records > 0) ms.push_back(Seconds(t0, res.first) * 1e3);
    }
    std::vector<double> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    std::printf("{\"mode\":\"seek\",\"first_record_ms\":[");
    for (size_t i = 0; i < ms.size(); i++) std::printf("%s%.1f", i ? "," : "", ms[i]);
    std::printf("],\"median_ms\":%.1f,\"errors\":%lld}\n", sorted.empty() ? -1.0 : sorted[sorted.size() / 2],
                (long long)errors);
    return 0;
  }

  // concurrent
  for (Range& r : ranges) r.end = r.low + static_cast<int64_t>((r.high - r.low) * a.fraction);
  std::vector<ReadResult> results(a.consumers);
  std::vector<rd_kafka_t*> handles(a.consumers);
  for (int i = 0; i < a.consumers; i++) {
    handles[i] = NewConsumer(a, ("concurrent-" + std::to_string(i)).c_str(), true);
    Connect(handles[i], a);
  }
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  Clock::time_point t0;
  for (int i = 0; i < a.consumers; i++) {
    threads.emplace_back([&, i] {
      ready++;
      while (!go.load()) std::this_thread::yield();
      results[i] = ReadRanges(a, handles[i], ranges, false);
    });
  }
  while (ready.load() < a.consumers) std::this_thread::yield();
  t0 = Clock::now();
  go = true;
  for (auto& t : threads) t.join();
  ReadResult total;
  Clock::time_point last = t0;
  for (auto& r : results) {
    total.records += r.records;
    total.bytes += r.bytes;
    total.errors += r.errors;
    last = std::max(last, r.done);
  }
  for (rd_kafka_t* rk : handles) rd_kafka_destroy(rk);
  double s = Seconds(t0, last);
  std::printf(
      "{\"mode\":\"concurrent\",\"consumers\":%d,\"records\":%lld,\"bytes\":%lld,\"seconds\":%.3f,"
      "\"mb_s\":%.1f,\"errors\":%lld}\n",
      a.consumers, (long long)total.records, (long long)total.bytes, s, total.bytes / s / 1e6, (long long)total.errors);
  return 0;
}

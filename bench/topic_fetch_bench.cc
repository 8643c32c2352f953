// Served-topic Fetch cost without the network: reads every partition of a
// table through ServedTopic::Fetch (1 MiB per fetch, as a consumer's
// max.partition.fetch.bytes), cold (empty batch cache) and then warm, and
// the time to the first batch of a fetch into the middle of partition 0 on
// a fresh registry. Prints one JSON line.
//
//   topic_fetch_bench CATALOG_URI NS.TABLE [--compression none|gzip|snappy|lz4|zstd] [--cache-mib N]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "thaw/serve/topic_registry.h"

using Clock = std::chrono::steady_clock;
using namespace thaw;

namespace {

double CpuSeconds() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

struct Pass {
  double seconds = 0, cpu = 0;
  int64_t bytes = 0, fetches = 0;
};

Result<Pass> ReadAll(serve::ServedTopic& t) {
  Pass p;
  const auto t0 = Clock::now();
  const double c0 = CpuSeconds();
  for (int32_t part = 0; part < t.partition_count(); ++part) {
    ASSIGN_OR_RAISE(auto o, t.Offsets(part));
    int64_t next = o.log_start;
    while (next < o.high_watermark) {
      ASSIGN_OR_RAISE(auto f, t.Fetch(part, next, 1 << 20));
      if (f.batches.empty()) return Status::Internal("empty fetch at {}:{}", part, next);
      p.bytes += f.bytes;
      ++p.fetches;
      // The next offset: the last batch's base offset + lastOffsetDelta (bytes 0..7 and 23..26).
      const std::string& last = *f.batches.back();
      int64_t base = 0;
      int32_t delta = 0;
      for (int i = 0; i < 8; ++i) base = (base << 8) | static_cast<uint8_t>(last[i]);
      for (int i = 23; i < 27; ++i) delta = (delta << 8) | static_cast<uint8_t>(last[i]);
      next = base + delta + 1;
    }
  }
  p.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  p.cpu = CpuSeconds() - c0;
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: topic_fetch_bench CATALOG_URI NS.TABLE [--compression C] [--cache-mib N]\n");
    return 2;
  }
  serve::TopicConfig cfg;
  cfg.name = "bench";
  cfg.table = argv[2];
  serve::ServeOptions opts;
  opts.cache_bytes = int64_t{4} << 30;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--compression")) {
      auto c = kafka::ParseCompression(argv[i + 1]);
      if (!c.ok()) {
        std::fprintf(stderr, "%s\n", c.status().ToString().c_str());
        return 2;
      }
      cfg.compression = *c;
    } else if (!std::strcmp(argv[i], "--cache-mib")) {
      opts.cache_bytes = std::atoll(argv[i + 1]) << 20;
    }
  }
  auto open = [&]() -> Result<std::unique_ptr<serve::TopicRegistry>> {
    ASSIGN_OR_RAISE(auto cat, catalog::OpenCatalog(argv[1], ""));
    return serve::TopicRegistry::Make(std::shared_ptr<catalog::Catalog>(std::move(cat)), {cfg}, opts);
  };
  auto fail = [](const Status& st) {
    std::fprintf(stderr, "%s\n", st.ToString().c_str());
    return 1;
  };
  // Seek: a fresh registry, Offsets then one Fetch in the middle of partition 0.
  double seek_ms = 0, open_ms = 0, offsets_ms = 0;
  {
    const auto t0 = Clock::now();
    auto ms = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); };
    auto reg = open();
    if (!reg.ok()) return fail(reg.status());
    open_ms = ms();
    auto t = (*reg)->topics()[0];
    auto o = t->Offsets(0);
    if (!o.ok()) return fail(o.status());
    offsets_ms = ms();
    auto f = t->Fetch(0, o->log_start + (o->high_watermark - o->log_start) / 2, 1 << 20);
    if (!f.ok()) return fail(f.status());
    seek_ms = ms();
  }
  auto reg = open();
  if (!reg.ok()) return fail(reg.status());
  auto t = (*reg)->topics()[0];
  auto cold = ReadAll(*t);
  if (!cold.ok()) return fail(cold.status());
  const auto s = t->stats();
  auto warm = ReadAll(*t);
  if (!warm.ok()) return fail(warm.status());
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  std::printf(
      "{\"partitions\": %d, \"bytes\": %lld, \"fetches\": %lld, \"cold_s\": %.3f, \"cold_cpu_s\": %.3f, "
      "\"cold_MBps\": %.1f, \"warm_s\": %.4f, \"warm_MBps\": %.1f, \"seek_first_fetch_ms\": %.1f, \"seek_open_ms\": "
      "%.1f, \"seek_offsets_ms\": %.1f, "
      "\"segment_reads\": %lld, \"row_groups_decoded\": %lld, \"cache_mib\": %.1f, \"peak_rss_mib\": %.1f}\n",
      t->partition_count(), static_cast<long long>(cold->bytes), static_cast<long long>(cold->fetches), cold->seconds,
      cold->cpu, cold->bytes / cold->seconds / 1e6, warm->seconds, warm->bytes / warm->seconds / 1e6, seek_ms, open_ms,
      offsets_ms, static_cast<long long>(s.segment_reads), static_cast<long long>(s.row_groups_decoded),
      (*reg)->cache()->stats().bytes / 1048576.0, ru.ru_maxrss / 1024.0);
  return 0;
}

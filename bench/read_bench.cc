// Reads a table through the record reader (the path replay and serve use)
// and prints one JSON line: records, key+value+header bytes, seconds, the
// time to the first record, peak RSS, and the row groups decoded. scripts/bench.sh runs it beside
// pyarrow reading the same files and prints the ratios.
//
//   read_bench CATALOG_URI TABLE [--partition P --from-offset N --limit K]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "thaw/records/record_reader.h"
#include "thaw/catalog/catalog.h"

using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: read_bench CATALOG_URI TABLE [--partition P --from-offset N --limit K]\n");
    return 2;
  }
  thaw::records::ReadOptions opt;
  int64_t limit = -1;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--partition")) opt.partitions = std::set<int32_t>{std::atoi(argv[i + 1])};
    else if (!std::strcmp(argv[i], "--from-offset")) opt.from_offset = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--limit")) limit = std::atoll(argv[i + 1]);
  }
  auto t0 = Clock::now();
  auto cat = thaw::catalog::OpenCatalog(argv[1], "");
  if (!cat.ok()) { std::fprintf(stderr, "%s\n", cat.status().ToString().c_str()); return 1; }
  auto id = thaw::catalog::TableIdentifier::Parse(argv[2]);
  auto table = (*cat)->LoadTable(*id);
  if (!table.ok()) { std::fprintf(stderr, "%s\n", table.status().ToString().c_str()); return 1; }
  auto shared = std::make_shared<const thaw::iceberg::Table>(std::move(*table));
  auto reader = thaw::records::RecordReader::Make(shared, opt);
  if (!reader.ok()) { std::fprintf(stderr, "%s\n", reader.status().ToString().c_str()); return 1; }
  thaw::records::RecordBatch batch;
  int64_t records = 0, bytes = 0;
  double first_ms = -1;
  while (limit < 0 || records < limit) {
    auto more = (*reader)->Next(&batch);
    if (!more.ok()) { std::fprintf(stderr, "%s\n", more.status().ToString().c_str()); return 1; }
    if (!*more) break;
    if (first_ms < 0) first_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    for (const auto& r : batch.records) {
      bytes += (r.key ? r.key->size() : 0) + (r.value ? r.value->size() : 0);
      for (const auto& h : batch.HeadersOf(r)) bytes += h.key.size() + (h.value ? h.value->size() : 0);
    }
    records += static_cast<int64_t>(batch.size());
  }
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  std::printf("{\"records\": %lld, \"bytes\": %lld, \"seconds\": %.4f, \"first_record_ms\": %.2f, "
              "\"peak_rss_mib\": %.1f, \"files\": %lld, \"row_groups_decoded\": %lld}\n",
              static_cast<long long>(records), static_cast<long long>(bytes), secs, first_ms,
              ru.ru_maxrss / 1024.0, static_cast<long long>((*reader)->planned_files()),
              static_cast<long long>((*reader)->decode_stats().row_groups));
  return 0;
}

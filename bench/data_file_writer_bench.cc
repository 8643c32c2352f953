// DataFileWriter throughput and memory: writes RECORDS records of VALUE
// bytes (random, from a 16 MiB pool larger than zstd's window, so they do
// not compress; 17-byte keys, two headers) into
// one canonical-layout Parquet file in DIR with row groups of ROW_GROUP
// bytes, and prints one JSON line: records, payload MiB, seconds, MiB/s,
// file MiB, row groups. Peak memory: run it under /usr/bin/time -v.
//
//   data_file_writer_bench DIR [RECORDS=1000000] [VALUE=1024] [ROW_GROUP=67108864]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "thaw/parquet/data_file_writer.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: data_file_writer_bench DIR [RECORDS] [VALUE] [ROW_GROUP]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const int64_t n = argc > 2 ? std::atoll(argv[2]) : 1000000;
  const int64_t value_size = argc > 3 ? std::atoll(argv[3]) : 1024;
  const int64_t row_group = argc > 4 ? std::atoll(argv[4]) : 64LL << 20;

  // A pool of random values the records cycle through (generating them is not timed).
  std::mt19937_64 rng(42);
  std::vector<std::string> pool(
      static_cast<size_t>(std::max<int64_t>(17, (16LL << 20) / std::max<int64_t>(1, value_size))));
  for (auto& v : pool) {
    v.resize(static_cast<size_t>(value_size));
    for (auto& c : v) c = static_cast<char>(rng());
  }
  std::vector<std::string> keys(1000);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = "key-" + std::to_string(1000000000000LL + i);

  auto schema = thaw::iceberg::Schema::FromJson(nlohmann::json::parse(thaw::parquet::CanonicalSchemaJson(false)));
  thaw::storage::LocalFileIO io;
  thaw::parquet::DataFileWriterOptions opt;
  opt.row_group_bytes = row_group;
  const std::string location = dir + "/bench.parquet";
  auto w = thaw::parquet::DataFileWriter::Make(io, location, *schema, 0, {}, opt);
  if (!w.ok()) {
    std::fprintf(stderr, "%s\n", w.status().ToString().c_str());
    return 1;
  }
  const auto t0 = std::chrono::steady_clock::now();
  constexpr int64_t kBatch = 1000;
  thaw::records::RecordBatch batch;
  for (int64_t at = 0; at < n; at += kBatch) {
    batch.Clear();
    for (int64_t i = at; i < std::min(n, at + kBatch); ++i) {
      thaw::records::Record r;
      r.partition = 0;
      r.offset = i;
      r.timestamp_ms = 1700000000000 + i;
      r.key = keys[static_cast<size_t>(i) % keys.size()];
      r.value = pool[static_cast<size_t>(i) % pool.size()];
      r.header_begin = static_cast<uint32_t>(batch.headers.size());
      batch.headers.push_back({"trace-id", std::string_view(keys[0])});
      batch.headers.push_back({"source", std::nullopt});
      r.header_count = 2;
      batch.records.push_back(r);
    }
    auto st = (*w)->Append(batch, 0, batch.size());
    if (!st.ok()) {
      std::fprintf(stderr, "%s\n", st.ToString().c_str());
      return 1;
    }
  }
  const int64_t payload = (*w)->appended_bytes();
  auto df = (*w)->Finish();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!df.ok()) {
    std::fprintf(stderr, "%s\n", df.status().ToString().c_str());
    return 1;
  }
  nlohmann::json out = {{"records", df->record_count},
                        {"payload_mib", payload / 1048576.0},
                        {"seconds", secs},
                        {"mib_per_s", payload / 1048576.0 / secs},
                        {"records_per_s", df->record_count / secs},
                        {"file_mib", df->file_size / 1048576.0},
                        {"row_groups", df->split_offsets.size()},
                        {"row_group_bytes", row_group}};
  std::printf("%s\n", out.dump().c_str());
  std::remove(location.c_str());
  return 0;
}

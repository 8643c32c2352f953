// Cost of the row layout's Avro value codec (records/avro_value.h) per value:
// decoding the datums Apache Avro's Java implementation wrote for the
// all-types schema (tests/unit/records/resources/avro_value_java.hex, 26
// fields: nested records, arrays, maps, unions, decimals, timestamps) into
// Arrow builders (validation pass + append pass), and encoding the rows back.
// Prints one JSON line: values, bytes, and values/s and MB/s for each (best
// of ROUNDS over N copies of the 4 datums).
//
//   avro_value_bench [N [ROUNDS]]     (default 50000 5), from the checkout root
#include <arrow/api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "thaw/records/avro_value.h"
#include "thaw/records/struct_fields.h"

using Clock = std::chrono::steady_clock;

static std::string Read(const char* path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 50000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  auto schema =
      thaw::records::AvroValueSchema::Make(Read("tests/unit/records/resources/avro_value_all_types.avsc"), 100);
  if (!schema.ok()) {
    std::fprintf(stderr, "%s (run from the checkout root)\n", schema.status().ToString().c_str());
    return 1;
  }
  std::vector<std::string> datums;
  std::istringstream lines(Read("tests/unit/records/resources/avro_value_java.hex"));
  for (std::string line; std::getline(lines, line);) {
    std::string b;
    for (size_t i = 0; i + 1 < line.size(); i += 2)
      b.push_back(static_cast<char>(std::stoi(line.substr(i, 2), nullptr, 16)));
    if (!b.empty()) datums.push_back(b);
  }
  int64_t bytes = 0;
  for (int i = 0; i < n; ++i) bytes += static_cast<int64_t>(datums[i % datums.size()].size());
  double best_decode = 1e9, best_encode = 1e9;
  for (int r = 0; r < rounds; ++r) {
    auto b = (*schema)->MakeBuilder();
    auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) {
      if (!(*schema)->Decode(datums[i % datums.size()], false, b->get()).ok()) return 2;
    }
    std::shared_ptr<arrow::Array> out;
    if (!(*b)->Finish(&out).ok()) return 3;
    auto t1 = Clock::now();
    const auto& sa = static_cast<const arrow::StructArray&>(*out);
    std::string enc;
    thaw::records::StructFields fields;  // as the record reader keeps one per batch
    for (int64_t i = 0; i < sa.length(); ++i) {
      enc.clear();
      if (!(*schema)->Encode(sa, i, std::nullopt, &enc, &fields).ok() || enc != datums[i % datums.size()]) return 4;
    }
    auto t2 = Clock::now();
    best_decode = std::min(best_decode, std::chrono::duration<double>(t1 - t0).count());
    best_encode = std::min(best_encode, std::chrono::duration<double>(t2 - t1).count());
  }
  std::printf(
      "{\"values\": %d, \"bytes\": %lld, \"decode_values_per_s\": %.0f, \"decode_mb_per_s\": %.1f, "
      "\"encode_values_per_s\": %.0f, \"encode_mb_per_s\": %.1f}\n",
      n, static_cast<long long>(bytes), n / best_decode, bytes / best_decode / 1e6, n / best_encode,
      bytes / best_encode / 1e6);
  return 0;
}

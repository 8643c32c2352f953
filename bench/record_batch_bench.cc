// Encode throughput of Kafka record batches (AppendRecordBatch) per codec:
// 1 KiB values (text-like, compressible about 3x), 16-byte keys, one header,
// 1000 records per batch (~1 MiB), as `thaw serve` builds Fetch responses.
// Bytes/s counts the records' key + value + header bytes.
//
//   ninja -C build record_batch_bench && build/bin/record_batch_bench
#include <benchmark/benchmark.h>

#include <deque>
#include <random>
#include <string>

#include "thaw/kafka/protocol/crc32c.h"
#include "thaw/kafka/protocol/record_batch.h"

namespace {

using namespace thaw;

struct Fixture {
  std::deque<std::string> store;
  kafka::RecordBatch batch;
  int64_t payload = 0;

  explicit Fixture(int n, size_t value_size) {
    std::mt19937_64 rng(3);
    const char* words[] = {"order",      "customer", "amount", "status", "shipped",  "pending",  "EUR",      "USD",
                           "2024-05-01", "true",     "false",  "null",   "{\"id\":", "\"sku\":", "quantity", "price"};
    for (int i = 0; i < n; ++i) {
      std::string& key = store.emplace_back(fmt::format("customer-{:07d}", rng() % 10'000'000));
      std::string& value = store.emplace_back();
      while (value.size() < value_size) {
        value += words[rng() % 16];
        value += std::to_string(rng() % 1000);
        value += ' ';
      }
      value.resize(value_size);
      kafka::Record r;
      r.offset = 1'000'000 + i;
      r.timestamp_ms = 1'700'000'000'000 + i * 3;
      r.key = key;
      r.value = value;
      r.header_begin = static_cast<uint32_t>(batch.headers.size());
      r.header_count = 1;
      batch.headers.push_back({"trace-id", std::string_view(key)});
      batch.records.push_back(r);
      payload += static_cast<int64_t>(key.size() + value.size() + 8 + key.size());
    }
  }
};

void BM_Encode(benchmark::State& state) {
  auto codec = static_cast<kafka::Compression>(state.range(0));
  static Fixture fx(1000, 1024);
  kafka::BatchOptions options;
  options.compression = codec;
  options.level = static_cast<int>(state.range(1));
  std::string out;
  size_t encoded = 0;
  for (auto _ : state) {
    out.clear();
    auto st = kafka::AppendRecordBatch(fx.batch.records, fx.batch, options, &out);
    if (!st.ok()) state.SkipWithError(st.message().c_str());
    encoded = out.size();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * fx.payload);
  state.SetLabel(fmt::format("{} level {} ratio {:.2f}", kafka::CompressionName(codec), options.level,
                             static_cast<double>(fx.payload) / static_cast<double>(encoded)));
}
// (codec, level): every codec at its default level (-1), then gzip and zstd
// at level 1.
BENCHMARK(BM_Encode)->ArgsProduct({{0, 1, 2, 3, 4}, {-1}})->Args({1, 1})->Args({4, 1})->Unit(benchmark::kMicrosecond);

void BM_Decode(benchmark::State& state) {
  auto codec = static_cast<kafka::Compression>(state.range(0));
  static Fixture fx(1000, 1024);
  kafka::BatchOptions options;
  options.compression = codec;
  std::string bytes;
  (void)kafka::AppendRecordBatch(fx.batch.records, fx.batch, options, &bytes);
  for (auto _ : state) {
    auto r = kafka::DecodeRecordBatches(bytes);
    if (!r.ok()) state.SkipWithError(r.status().message().c_str());
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(state.iterations() * fx.payload);
  state.SetLabel(std::string(kafka::CompressionName(codec)));
}
BENCHMARK(BM_Decode)->DenseRange(0, 4)->Unit(benchmark::kMicrosecond);

void BM_Crc32c(benchmark::State& state) {
  std::string buf(1 << 20, 'x');
  bool hw = state.range(0) == 1;
  if (hw && !kafka::Crc32cHardwareAvailable()) {
    state.SkipWithError("no SSE4.2");
    return;
  }
  for (auto _ : state) {
    uint32_t c = hw ? kafka::Crc32cHardware(buf.data(), buf.size()) : kafka::Crc32cSoftware(buf.data(), buf.size());
    benchmark::DoNotOptimize(c);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(buf.size()));
  state.SetLabel(hw ? "sse4.2" : "table");
}
BENCHMARK(BM_Crc32c)->Arg(0)->Arg(1);

}  // namespace

BENCHMARK_MAIN();

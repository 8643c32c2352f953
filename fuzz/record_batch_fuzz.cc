// libFuzzer target: Kafka record batches (Produce requests, Fetch responses
// and log segments carry them) must decode or fail with a Status, never
// crash or allocate without bound; whatever decodes must re-encode, and the
// re-encoded batch must decode to the same records.
// Seeds in fuzz/corpus/record_batch come from fuzz/make_record_batch_corpus.sh.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "thaw/kafka/protocol/crc32c.h"
#include "thaw/kafka/protocol/record_batch.h"

using namespace thaw;
using namespace thaw::kafka;

namespace {

// The input with every whole batch's CRC-32C recomputed, so that mutations
// reach the record parsing and decompression behind the CRC check.
std::string WithFixedCrcs(std::string_view in) {
  std::string s(in);
  size_t pos = 0;
  while (s.size() - pos >= kRecordBatchHeaderSize) {
    auto* p = reinterpret_cast<unsigned char*>(s.data() + pos);
    int64_t len =
        static_cast<int32_t>((uint32_t{p[8]} << 24) | (uint32_t{p[9]} << 16) | (uint32_t{p[10]} << 8) | p[11]);
    if (len < 49 || static_cast<uint64_t>(len) + 12 > s.size() - pos) break;
    uint32_t crc = Crc32c(p + 21, static_cast<size_t>(len) + 12 - 21);
    for (int i = 0; i < 4; ++i) p[17 + i] = static_cast<unsigned char>(crc >> (24 - 8 * i));
    pos += static_cast<size_t>(len) + 12;
  }
  return s;
}

void Check(std::string_view bytes) {
  DecodeOptions options;
  options.max_records_bytes = 4 << 20;
  options.allow_partial_tail = true;
  auto decoded = DecodeRecordBatches(bytes, options);
  if (!decoded.ok()) return;
  for (const DecodedBatch& batch : decoded->batches) {
    if (batch.records.empty()) continue;
    kafka::RecordBatch owner;
    for (const DecodedRecord& d : batch.records) {
      kafka::Record r;
      r.offset = d.offset;
      r.timestamp_ms = d.timestamp_ms;
      r.timestamp_type = batch.timestamp_type();
      if (d.key) r.key = std::string_view(*d.key);
      if (d.value) r.value = std::string_view(*d.value);
      r.header_begin = static_cast<uint32_t>(owner.headers.size());
      r.header_count = static_cast<uint32_t>(d.headers.size());
      for (const auto& [k, v] : d.headers) {
        kafka::Header h{k, std::nullopt};
        if (v) h.value = std::string_view(*v);
        owner.headers.push_back(h);
      }
      owner.records.push_back(r);
    }
    BatchOptions bo;
    bo.compression = batch.compression();
    bo.leader_epoch = batch.leader_epoch;
    std::string out;
    Status st = AppendRecordBatch(owner.records, owner, bo, &out);
    if (!st.ok()) {
      // The one thing a decodable batch may hold that one batch cannot:
      // timestamps more than 2^63 ms apart (the deltas are free varlongs).
      if (st.code() == StatusCode::kInvalidArgument && st.message().rfind("timestamps ", 0) == 0) {
        continue;
      }
      std::fprintf(stderr, "re-encoding a decoded batch failed: %s\n", st.ToString().c_str());
      std::abort();
    }
    auto again = DecodeRecordBatches(out);
    if (!again.ok() || again->size() != 1 || (*again)[0].records != batch.records ||
        (*again)[0].compression() != batch.compression() || (*again)[0].timestamp_type() != batch.timestamp_type()) {
      std::fprintf(stderr, "re-encoded batch does not decode to the same records: %s\n",
                   again.ok() ? "records differ" : again.status().ToString().c_str());
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  Check(bytes);
  Check(WithFixedCrcs(bytes));
  return 0;
}

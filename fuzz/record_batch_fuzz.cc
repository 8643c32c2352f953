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

#include "thaw/kafka/protocol/record_batch.h"

using namespace thaw;
using namespace thaw::kafka;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  DecodeOptions options;
  options.max_records_bytes = 4 << 20;
  options.allow_partial_tail = true;
  auto decoded = DecodeRecordBatches(bytes, options);
  if (!decoded.ok()) return 0;
  for (const DecodedBatch& batch : decoded->batches) {
    if (batch.records.empty()) continue;
    records::RecordBatch owner;
    for (const DecodedRecord& d : batch.records) {
      records::Record r;
      r.offset = d.offset;
      r.timestamp_ms = d.timestamp_ms;
      r.timestamp_type = batch.timestamp_type();
      if (d.key) r.key = std::string_view(*d.key);
      if (d.value) r.value = std::string_view(*d.value);
      r.header_begin = static_cast<uint32_t>(owner.headers.size());
      r.header_count = static_cast<uint32_t>(d.headers.size());
      for (const auto& [k, v] : d.headers) {
        records::Header h{k, std::nullopt};
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
  return 0;
}

// How many records a record batch v2 holds, read from its header without
// decoding it (for the records-served counters): the int32 recordsCount at
// byte 57 (baseOffset 8, batchLength 4, partitionLeaderEpoch 4, magic 1,
// crc 4, attributes 2, lastOffsetDelta 4, baseTimestamp 8, maxTimestamp 8,
// producerId 8, producerEpoch 2, baseSequence 4). 0 for a shorter buffer.
#pragma once

#include <cstdint>
#include <string_view>

namespace thaw::metrics {

inline int64_t BatchRecordCount(std::string_view batch) {
  constexpr size_t kAt = 57;
  if (batch.size() < kAt + 4) return 0;
  const auto* b = reinterpret_cast<const unsigned char*>(batch.data() + kAt);
  const int32_t n = static_cast<int32_t>((uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) |
                                         uint32_t{b[3]});
  return n < 0 ? 0 : n;
}

// Record batches v2 back to back (a Fetch response's records): the records
// in the whole batches, walking each batchLength.
inline int64_t RecordsInBatches(std::string_view records) {
  int64_t total = 0;
  while (records.size() >= 12) {
    const auto* b = reinterpret_cast<const unsigned char*>(records.data() + 8);
    const uint32_t len = (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | uint32_t{b[3]};
    const uint64_t whole = 12ull + len;
    if (len > INT32_MAX || whole > records.size()) break;  // a partial trailing batch
    total += BatchRecordCount(records.substr(0, whole));
    records.remove_prefix(whole);
  }
  return total;
}

}  // namespace thaw::metrics

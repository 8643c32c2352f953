// Kafka records as Thaw hands them to replay, serve and inspect, and as the
// wire codec encodes them (kafka/protocol/record_batch.h). Records are views
// into the buffers they were decoded from, Arrow's or a fetched batch's (no
// copy of keys and values); a RecordBatch keeps those buffers alive. A plain
// type below both the record reader (records/, which re-exports it) and the
// protocol.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace thaw::kafka {

enum class TimestampType : int8_t { kCreateTime = 0, kLogAppendTime = 1 };

struct Header {
  std::string_view key;
  std::optional<std::string_view> value;  // nullopt = null value
};

struct Record {
  int32_t partition = 0;
  int64_t offset = 0;
  int64_t timestamp_ms = 0;
  TimestampType timestamp_type = TimestampType::kCreateTime;
  std::optional<std::string_view> key;    // nullopt = null key
  std::optional<std::string_view> value;  // nullopt = null value (tombstone)
  // The source topic stored with the row (the layout's topic column, e.g.
  // the Kafka Connect sink's _kafka_metadata_topic); nullopt when the layout
  // has none or the row's is null. Callers fall back to the table's
  // `thaw.source.topic` property.
  std::optional<std::string_view> topic;
  uint32_t header_begin = 0;              // into RecordBatch::headers
  uint32_t header_count = 0;
  // The decoded row this record came from (kept alive by RecordBatch), for
  // filters over table columns (--where).
  const void* source_batch = nullptr;     // arrow::RecordBatch (records/)
  int64_t source_row = -1;
};

struct RecordBatch {
  std::vector<Record> records;
  std::vector<Header> headers;
  // Owners of the bytes the views point into (Arrow batches, strings built
  // by Thaw such as JSON values); shared with the reader's buffers.
  std::vector<std::shared_ptr<const void>> keepalive;

  std::span<const Header> HeadersOf(const Record& r) const {
    return {headers.data() + r.header_begin, r.header_count};
  }
  void Clear() {
    records.clear();
    headers.clear();
    keepalive.clear();
  }
  size_t size() const { return records.size(); }
};

}  // namespace thaw::kafka

// Kafka record batches v2 (magic 2): encoding Thaw's records into batches
// for Fetch responses, and decoding batches (tests, fuzzing, Produce
// validation). Layout: /work/shared/reference/kafka-protocol.md §2.1 and
// Kafka's docs/implementation.html §5.3.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/kafka/protocol/compression.h"
#include "thaw/kafka/record.h"

namespace thaw::kafka {

// Size of the batch header (baseOffset through recordsCount), never compressed.
inline constexpr size_t kRecordBatchHeaderSize = 61;
// Bytes before batchLength counts: baseOffset int64 + batchLength int32.
inline constexpr size_t kRecordBatchLogOverhead = 12;

// Attribute bits.
inline constexpr int16_t kAttrCompressionMask = 0x07;
inline constexpr int16_t kAttrLogAppendTime = 0x08;
inline constexpr int16_t kAttrTransactional = 0x10;
inline constexpr int16_t kAttrControl = 0x20;

struct BatchOptions {
  Compression compression = Compression::kNone;
  int32_t leader_epoch = 0;
  int level = -1;  // codec default
};

// Appends ONE record batch v2 (magic 2, CRC-32C) holding `records` to *out.
// `records`: one partition, strictly ascending offsets (gaps allowed: base
// offset = first, offset deltas keep the gaps, lastOffsetDelta = last -
// first, which must fit in int32); headers from `owner.HeadersOf(r)`;
// baseTimestamp = first record's, maxTimestamp = the largest; producer id,
// epoch and base sequence -1; record attributes 0.
//
// Timestamp type: all records must share theirs (callers split where it
// changes). With LogAppendTime (attribute bit 3) consumers ignore per-record
// timestamps and report the batch's maxTimestamp for every record (Kafka's
// DefaultRecordBatch), so a LogAppendTime batch must also hold records of
// one timestamp only: split with BatchableRun(). Violations fail with
// InvalidArgument, never a batch that misreports timestamps.
//
// Fast path: records are written straight from the views into *out (one
// sizing pass, one writing pass); a compressed batch encodes its records
// into a per-thread scratch buffer first.
Status AppendRecordBatch(std::span<const Record> records, const RecordBatch& owner,
                         const BatchOptions& options, std::string* out);

// An encoded batch v2 carrying `epoch` as its partitionLeaderEpoch (bytes
// 12-15, before the CRC'd part: the CRC stays valid): `batch` itself when it
// carries it already (or is too short to hold one), else a copy.
std::shared_ptr<const std::string> WithLeaderEpoch(const std::shared_ptr<const std::string>& batch, int32_t epoch);

// The length of the longest prefix of `records` that AppendRecordBatch
// accepts as one batch (same timestamp type; with LogAppendTime the same
// timestamp; offset span within int32). 0 only for an empty span.
size_t BatchableRun(std::span<const Record> records);

struct DecodedRecord {
  int64_t offset = 0;
  // baseTimestamp + delta; with LogAppendTime the batch's maxTimestamp (as
  // Kafka's consumers report it).
  int64_t timestamp_ms = 0;
  std::optional<std::string> key, value;
  std::vector<std::pair<std::string, std::optional<std::string>>> headers;
  bool operator==(const DecodedRecord&) const = default;
};

struct DecodedBatch {
  int64_t base_offset = 0;
  int32_t last_offset_delta = 0;
  int32_t leader_epoch = 0;
  int16_t attributes = 0;
  int64_t base_timestamp = 0, max_timestamp = 0;
  std::vector<DecodedRecord> records;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int32_t base_sequence = -1;

  Compression compression() const { return static_cast<Compression>(attributes & kAttrCompressionMask); }
  TimestampType timestamp_type() const {
    return (attributes & kAttrLogAppendTime) ? TimestampType::kLogAppendTime
                                             : TimestampType::kCreateTime;
  }
  bool is_control() const { return attributes & kAttrControl; }
  bool is_transactional() const { return attributes & kAttrTransactional; }
};

struct DecodeOptions {
  // Limit on a batch's records section after decompression: more fails
  // (corrupt batch or decompression bomb) without allocating past it.
  size_t max_records_bytes = size_t{256} << 20;
  // A Fetch response may end with a partial batch (KIP-74): when true it is
  // reported in DecodeResult::partial_tail_bytes instead of failing.
  bool allow_partial_tail = false;
};

struct DecodeResult {
  std::vector<DecodedBatch> batches;
  size_t partial_tail_offset = 0;  // where the partial trailing batch starts
  size_t partial_tail_bytes = 0;   // 0: none
};

// Every batch in `bytes`, back to back: validates lengths, magic (2 only),
// CRC-32C, codec, every varint and length against the bytes remaining,
// offsets (strictly ascending within the batch, within lastOffsetDelta),
// and decompresses within the limit. Errors are Corrupt/Unsupported and say
// what is wrong at which byte offset.
Result<DecodeResult> DecodeRecordBatches(std::string_view bytes, const DecodeOptions& options);
// Same with default options; a partial trailing batch is an error whose
// message says so ("truncated record batch").
Result<std::vector<DecodedBatch>> DecodeRecordBatches(std::string_view bytes);

}  // namespace thaw::kafka

#include "thaw/kafka/protocol/record_batch.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <limits>

#include "thaw/kafka/protocol/crc32c.h"

namespace thaw::kafka {

namespace {


// ---- encoding helpers ----

inline uint64_t ZigZag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }

inline size_t VarintSize(uint64_t v) {
  int bits = 64 - __builtin_clzll(v | 1);
  return static_cast<size_t>((bits + 6) / 7);
}

inline size_t SignedVarintSize(int64_t v) { return VarintSize(ZigZag(v)); }

inline char* PutVarint(char* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

inline char* PutSignedVarint(char* p, int64_t v) { return PutVarint(p, ZigZag(v)); }

inline char* PutBytes(char* p, std::string_view s) {
  if (!s.empty()) std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

inline char* PutNullable(char* p, const std::optional<std::string_view>& s) {
  if (!s) return PutSignedVarint(p, -1);
  p = PutSignedVarint(p, static_cast<int64_t>(s->size()));
  return PutBytes(p, *s);
}

inline size_t NullableSize(const std::optional<std::string_view>& s) {
  return s ? SignedVarintSize(static_cast<int64_t>(s->size())) + s->size() : 1;
}

inline void PutBE16(char* p, uint16_t v) {
  p[0] = static_cast<char>(v >> 8);
  p[1] = static_cast<char>(v);
}
inline void PutBE32(char* p, uint32_t v) {
  p[0] = static_cast<char>(v >> 24);
  p[1] = static_cast<char>(v >> 16);
  p[2] = static_cast<char>(v >> 8);
  p[3] = static_cast<char>(v);
}
inline void PutBE64(char* p, uint64_t v) {
  PutBE32(p, static_cast<uint32_t>(v >> 32));
  PutBE32(p + 4, static_cast<uint32_t>(v));
}

constexpr size_t kMaxInt32 = static_cast<size_t>(std::numeric_limits<int32_t>::max());

// Size of a record's body (after its length varint).
inline size_t BodySize(const Record& r, std::span<const Header> headers, int64_t ts_delta, int64_t off_delta) {
  size_t n = 1 + SignedVarintSize(ts_delta) + SignedVarintSize(off_delta) + NullableSize(r.key) +
             NullableSize(r.value) + SignedVarintSize(static_cast<int64_t>(headers.size()));
  for (const Header& h : headers) {
    n += SignedVarintSize(static_cast<int64_t>(h.key.size())) + h.key.size() + NullableSize(h.value);
  }
  return n;
}

inline char* PutRecord(char* p, const Record& r, std::span<const Header> headers, int64_t ts_delta, int64_t off_delta,
                       size_t body) {
  p = PutSignedVarint(p, static_cast<int64_t>(body));
  *p++ = 0;  // record attributes
  p = PutSignedVarint(p, ts_delta);
  p = PutSignedVarint(p, off_delta);
  p = PutNullable(p, r.key);
  p = PutNullable(p, r.value);
  p = PutSignedVarint(p, static_cast<int64_t>(headers.size()));
  for (const Header& h : headers) {
    p = PutSignedVarint(p, static_cast<int64_t>(h.key.size()));
    p = PutBytes(p, h.key);
    p = PutNullable(p, h.value);
  }
  return p;
}

struct Plan {
  int64_t base_offset = 0, base_timestamp = 0, max_timestamp = 0;
  int32_t last_offset_delta = 0;
  size_t records_size = 0;
  bool log_append_time = false;
};

Status CheckAndPlan(std::span<const Record> records, const RecordBatch& owner, Plan* plan) {
  if (records.empty()) return Status::Invalid("a record batch needs at least one record");
  const Record& first = records.front();
  plan->base_offset = first.offset;
  plan->base_timestamp = first.timestamp_ms;
  plan->max_timestamp = first.timestamp_ms;
  plan->log_append_time = first.timestamp_type == TimestampType::kLogAppendTime;
  int64_t prev_offset = 0;
  size_t total = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    const Record& r = records[i];
    if (r.timestamp_type != first.timestamp_type) {
      return Status::Invalid(
          "record at offset {} has another timestamp type than the batch's first record (offset {}); one batch "
          "holds one timestamp type: split the records where it changes (BatchableRun)",
          r.offset, first.offset);
    }
    if (plan->log_append_time && r.timestamp_ms != first.timestamp_ms) {
      return Status::Invalid(
          "record at offset {} has LogAppendTime {} but the batch's first record (offset {}) has {}; consumers "
          "report a LogAppendTime batch's maxTimestamp for every record, so split where it changes (BatchableRun)",
          r.offset, r.timestamp_ms, first.offset, first.timestamp_ms);
    }
    if (i > 0 && r.offset <= prev_offset) {
      return Status::Invalid("record offsets must ascend within a batch: offset {} follows {}", r.offset, prev_offset);
    }
    prev_offset = r.offset;
    int64_t off_delta;
    if (__builtin_sub_overflow(r.offset, first.offset, &off_delta) || off_delta > INT32_MAX) {
      return Status::Invalid("offsets {} and {} are too far apart for one record batch (the delta is an int32)",
                             first.offset, r.offset);
    }
    int64_t ts_delta;
    if (__builtin_sub_overflow(r.timestamp_ms, first.timestamp_ms, &ts_delta)) {
      return Status::Invalid("timestamps {} and {} (offsets {} and {}) are too far apart for one record batch",
                             first.timestamp_ms, r.timestamp_ms, first.offset, r.offset);
    }
    plan->max_timestamp = std::max(plan->max_timestamp, r.timestamp_ms);
    if ((r.key && r.key->size() > kMaxInt32) || (r.value && r.value->size() > kMaxInt32)) {
      return Status::Invalid("record at offset {} has a key or value over 2 GiB", r.offset);
    }
    if (r.header_begin + static_cast<size_t>(r.header_count) > owner.headers.size()) {
      return Status::Internal("record at offset {} refers to headers [{}, {}) beyond the batch's {} headers", r.offset,
                              r.header_begin, r.header_begin + r.header_count, owner.headers.size());
    }
    size_t body = BodySize(r, owner.HeadersOf(r), ts_delta, off_delta);
    if (body > kMaxInt32) return Status::Invalid("record at offset {} is over 2 GiB encoded", r.offset);
    total += SignedVarintSize(static_cast<int64_t>(body)) + body;
  }
  plan->last_offset_delta = static_cast<int32_t>(prev_offset - first.offset);
  if (total + kRecordBatchHeaderSize > kMaxInt32) {
    return Status::Invalid("records at offsets {}..{} are over 2 GiB encoded: split them into smaller batches",
                           first.offset, prev_offset);
  }
  plan->records_size = total;
  return Status::OK();
}

char* WriteRecords(char* p, std::span<const Record> records, const RecordBatch& owner, const Plan& plan) {
  for (const Record& r : records) {
    auto headers = owner.HeadersOf(r);
    int64_t ts_delta = r.timestamp_ms - plan.base_timestamp;
    int64_t off_delta = r.offset - plan.base_offset;
    size_t body = BodySize(r, headers, ts_delta, off_delta);
    p = PutRecord(p, r, headers, ts_delta, off_delta, body);
  }
  return p;
}

}  // namespace

std::shared_ptr<const std::string> WithLeaderEpoch(const std::shared_ptr<const std::string>& batch, int32_t epoch) {
  constexpr size_t at = kRecordBatchLogOverhead;
  if (batch->size() < at + 4) return batch;
  const auto e = static_cast<uint32_t>(epoch);
  char bytes[4];
  for (int i = 0; i < 4; ++i) bytes[i] = static_cast<char>(e >> (24 - 8 * i));
  if (std::memcmp(batch->data() + at, bytes, 4) == 0) return batch;
  auto out = std::make_shared<std::string>(*batch);
  std::memcpy(out->data() + at, bytes, 4);
  return out;
}

size_t BatchableRun(std::span<const Record> records) {
  if (records.empty()) return 0;
  const Record& first = records.front();
  bool lat = first.timestamp_type == TimestampType::kLogAppendTime;
  size_t i = 1;
  for (; i < records.size(); ++i) {
    const Record& r = records[i];
    if (r.timestamp_type != first.timestamp_type) break;
    if (lat && r.timestamp_ms != first.timestamp_ms) break;
    int64_t d;
    if (__builtin_sub_overflow(r.offset, first.offset, &d) || d > INT32_MAX || d <= 0) break;
    if (__builtin_sub_overflow(r.timestamp_ms, first.timestamp_ms, &d)) break;
  }
  return i;
}

Status AppendRecordBatch(std::span<const Record> records, const RecordBatch& owner,
                         const BatchOptions& options, std::string* out) {
  Plan plan;
  RETURN_NOT_OK(CheckAndPlan(records, owner, &plan));
  int16_t attributes = static_cast<int16_t>(static_cast<int16_t>(options.compression) & kAttrCompressionMask);
  if (static_cast<int>(options.compression) < 0 || static_cast<int>(options.compression) > 4) {
    return Status::Invalid("unknown compression codec {}", static_cast<int>(options.compression));
  }
  if (plan.log_append_time) attributes |= kAttrLogAppendTime;

  const size_t start = out->size();
  if (options.compression == Compression::kNone) {
    const size_t size = start + kRecordBatchHeaderSize + plan.records_size;
    bool agree = true;
#if defined(__cpp_lib_string_resize_and_overwrite)
    // Written once, not zeroed first: a cold `thaw serve` encodes every
    // batch into new memory, and zeroing it was a pass of its own.
    // The size passed to the operation is not used: GCC 12's libstdc++
    // passes the grown capacity instead when the string had to grow.
    out->resize_and_overwrite(size, [&](char* p, size_t) {
      agree = WriteRecords(p + start + kRecordBatchHeaderSize, records, owner, plan) == p + size;
      return size;
    });
#else
    out->resize(size);
    agree = WriteRecords(out->data() + start + kRecordBatchHeaderSize, records, owner, plan) == out->data() + size;
#endif
    if (!agree) {
      out->resize(start);
      return Status::Internal("record batch sizing and writing disagree");
    }
  } else {
    thread_local std::string scratch;
    if (scratch.size() < plan.records_size) scratch.resize(plan.records_size);
    char* end = WriteRecords(scratch.data(), records, owner, plan);
    if (end != scratch.data() + plan.records_size) return Status::Internal("record batch sizing and writing disagree");
    out->resize(start + kRecordBatchHeaderSize);
    Status st = Compress(options.compression, std::string_view(scratch.data(), plan.records_size), options.level, out);
    if (scratch.size() > (size_t{64} << 20)) std::string().swap(scratch);  // don't pin a huge buffer per thread
    if (!st.ok()) {
      out->resize(start);
      return st.WithContext(fmt::format("compressing the record batch at offset {}", plan.base_offset));
    }
    if (out->size() - start > kMaxInt32) {
      out->resize(start);
      return Status::Invalid("record batch at offset {} is over 2 GiB compressed", plan.base_offset);
    }
  }

  char* h = out->data() + start;
  const size_t total = out->size() - start;
  PutBE64(h + 0, static_cast<uint64_t>(plan.base_offset));
  PutBE32(h + 8, static_cast<uint32_t>(total - kRecordBatchLogOverhead));
  PutBE32(h + 12, static_cast<uint32_t>(options.leader_epoch));
  h[16] = 2;  // magic
  PutBE16(h + 21, static_cast<uint16_t>(attributes));
  PutBE32(h + 23, static_cast<uint32_t>(plan.last_offset_delta));
  PutBE64(h + 27, static_cast<uint64_t>(plan.base_timestamp));
  PutBE64(h + 35, static_cast<uint64_t>(plan.max_timestamp));
  PutBE64(h + 43, static_cast<uint64_t>(int64_t{-1}));  // producer id
  PutBE16(h + 51, static_cast<uint16_t>(int16_t{-1}));  // producer epoch
  PutBE32(h + 53, static_cast<uint32_t>(int32_t{-1}));  // base sequence
  PutBE32(h + 57, static_cast<uint32_t>(records.size()));
  PutBE32(h + 17, Crc32c(h + 21, total - 21));
  return Status::OK();
}

// ---- decoding ----

namespace {

inline uint16_t GetBE16(const char* p) {
  return static_cast<uint16_t>((static_cast<unsigned char>(p[0]) << 8) | static_cast<unsigned char>(p[1]));
}
inline uint32_t GetBE32(const char* p) {
  return (uint32_t{static_cast<unsigned char>(p[0])} << 24) | (uint32_t{static_cast<unsigned char>(p[1])} << 16) |
         (uint32_t{static_cast<unsigned char>(p[2])} << 8) | uint32_t{static_cast<unsigned char>(p[3])};
}
inline uint64_t GetBE64(const char* p) { return (uint64_t{GetBE32(p)} << 32) | GetBE32(p + 4); }

// A cursor over a records section; errors name the byte offset in the
// input (uncompressed batches) or in the decompressed section.
class RecordsReader {
 public:
  RecordsReader(std::string_view data, std::string where, size_t origin)
      : data_(data), where_(std::move(where)), origin_(origin), limit_(data.size()) {}

  size_t pos() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }
  // Reads stop at `limit` (the end of the current record).
  void set_limit(size_t limit) { limit_ = limit; }
  size_t left() const { return limit_ - pos_; }

  template <typename... Args>
  Status Error(size_t at, fmt::format_string<Args...> f, Args&&... args) const {
    return Status::Corrupt("{}, records byte {}: {}", where_, origin_ + at,
                           fmt::format(f, std::forward<Args>(args)...));
  }

  Status Varint(int max_bytes, const char* what, int64_t* out) {
    size_t at = pos_;
    uint64_t v = 0;
    for (int i = 0; i < max_bytes; ++i) {
      if (pos_ >= limit_) return Error(at, "{} varint runs past the end of the record", what);
      uint8_t b = static_cast<uint8_t>(data_[pos_++]);
      v |= static_cast<uint64_t>(b & 0x7F) << (7 * i);
      if (!(b & 0x80)) {
        int64_t s = static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
        if (max_bytes == 5 && (s > INT32_MAX || s < INT32_MIN)) return Error(at, "{} varint overflows int32", what);
        *out = s;
        return Status::OK();
      }
    }
    return Error(at, "{} varint is longer than {} bytes", what, max_bytes);
  }
  Status Varint32(const char* what, int64_t* out) { return Varint(5, what, out); }
  Status Varlong(const char* what, int64_t* out) { return Varint(10, what, out); }

  // A length-prefixed byte string; -1 = null when nullable.
  Status Bytes(const char* what, bool nullable, std::optional<std::string>* out) {
    size_t at = pos_;
    int64_t len;
    RETURN_NOT_OK(Varint32(what, &len));
    if (len == -1 && nullable) {
      out->reset();
      return Status::OK();
    }
    if (len < 0) return Error(at, "{} length {} is negative", what, len);
    if (static_cast<uint64_t>(len) > left()) {
      return Error(at, "{} length {} exceeds the {} bytes left in the record", what, len, left());
    }
    out->emplace(data_.substr(pos_, static_cast<size_t>(len)));
    pos_ += static_cast<size_t>(len);
    return Status::OK();
  }

  Status Int8(int8_t* out) {
    if (pos_ >= limit_) return Error(pos_, "record ends before its attributes byte");
    *out = static_cast<int8_t>(data_[pos_++]);
    return Status::OK();
  }

 private:
  std::string_view data_;
  std::string where_;
  size_t origin_;
  size_t limit_;
  size_t pos_ = 0;
};

Status DecodeRecords(std::string_view section, int32_t count, DecodedBatch* batch, RecordsReader& rd) {
  // Each record needs at least 7 bytes: length, attributes, timestamp delta,
  // offset delta, key length, value length, header count.
  if (static_cast<uint64_t>(count) * 7 > section.size()) {
    return rd.Error(0, "recordsCount {} needs at least {} bytes but the records section has {}", count,
                    static_cast<uint64_t>(count) * 7, section.size());
  }
  batch->records.reserve(static_cast<size_t>(count));
  int64_t prev_delta = -1;
  const bool log_append = batch->attributes & kAttrLogAppendTime;
  for (int32_t i = 0; i < count; ++i) {
    size_t rec_at = rd.pos();
    int64_t len;
    rd.set_limit(section.size());
    RETURN_NOT_OK(rd.Varint32("record length", &len));
    if (len < 0 || static_cast<uint64_t>(len) > rd.remaining()) {
      return rd.Error(rec_at, "record {} of {} declares length {} but {} bytes remain", i, count, len, rd.remaining());
    }
    const size_t limit = rd.pos() + static_cast<size_t>(len);
    rd.set_limit(limit);
    DecodedRecord rec;
    int8_t attr;
    RETURN_NOT_OK(rd.Int8(&attr));
    int64_t ts_delta, off_delta;
    RETURN_NOT_OK(rd.Varlong("timestamp delta", &ts_delta));
    RETURN_NOT_OK(rd.Varint32("offset delta", &off_delta));
    if (off_delta <= prev_delta || off_delta > batch->last_offset_delta) {
      return rd.Error(rec_at, "record {} has offset delta {}: deltas must ascend and stay within lastOffsetDelta {}", i,
                      off_delta, batch->last_offset_delta);
    }
    prev_delta = off_delta;
    rec.offset = batch->base_offset + off_delta;  // no overflow: checked against lastOffsetDelta by the caller
    if (log_append) {
      rec.timestamp_ms = batch->max_timestamp;
    } else if (__builtin_add_overflow(batch->base_timestamp, ts_delta, &rec.timestamp_ms)) {
      return rd.Error(rec_at, "record {} timestamp delta {} overflows the base timestamp {}", i, ts_delta,
                      batch->base_timestamp);
    }
    RETURN_NOT_OK(rd.Bytes("key", true, &rec.key));
    RETURN_NOT_OK(rd.Bytes("value", true, &rec.value));
    size_t hc_at = rd.pos();
    int64_t header_count;
    RETURN_NOT_OK(rd.Varint32("header count", &header_count));
    if (header_count < 0 || static_cast<uint64_t>(header_count) * 2 > rd.left()) {
      return rd.Error(hc_at, "record {} header count {} does not fit in the {} bytes left in the record", i,
                      header_count, rd.left());
    }
    rec.headers.reserve(static_cast<size_t>(header_count));
    for (int64_t h = 0; h < header_count; ++h) {
      std::optional<std::string> hk, hv;
      RETURN_NOT_OK(rd.Bytes("header key", false, &hk));
      RETURN_NOT_OK(rd.Bytes("header value", true, &hv));
      rec.headers.emplace_back(std::move(*hk), std::move(hv));
    }
    if (rd.pos() != limit) {
      return rd.Error(rec_at, "record {} declares {} bytes but its fields take {}", i, len,
                      static_cast<int64_t>(rd.pos()) - static_cast<int64_t>(limit) + len);
    }
    batch->records.push_back(std::move(rec));
  }
  if (rd.remaining() != 0) {
    return rd.Error(rd.pos(), "{} bytes follow the last of the batch's {} records", rd.remaining(), count);
  }
  return Status::OK();
}

}  // namespace

Result<DecodeResult> DecodeRecordBatches(std::string_view bytes, const DecodeOptions& options) {
  DecodeResult result;
  size_t pos = 0;
  std::string decompressed;
  while (pos < bytes.size()) {
    const size_t left = bytes.size() - pos;
    const char* b = bytes.data() + pos;
    int64_t batch_length = -1;
    if (left >= kRecordBatchLogOverhead) {
      batch_length = static_cast<int32_t>(GetBE32(b + 8));
      if (batch_length < static_cast<int64_t>(kRecordBatchHeaderSize - kRecordBatchLogOverhead)) {
        return Status::Corrupt("record batch at byte {}: batchLength {} is below the minimum {}", pos, batch_length,
                               kRecordBatchHeaderSize - kRecordBatchLogOverhead);
      }
    }
    if (batch_length < 0 || static_cast<uint64_t>(batch_length) + kRecordBatchLogOverhead > left) {
      if (left >= 17 && b[16] != 2) {
        return Status::Unsupported("record batch at byte {} has magic {}: only record batch v2 (magic 2) is supported",
                                   pos, static_cast<int>(b[16]));
      }
      if (options.allow_partial_tail) {
        result.partial_tail_offset = pos;
        result.partial_tail_bytes = left;
        return result;
      }
      return Status::Corrupt(
          "truncated record batch at byte {}: it needs {} bytes but {} remain (a partial trailing batch, as a Fetch "
          "response may end with)",
          pos, batch_length < 0 ? std::string("at least 12") : std::to_string(batch_length + 12), left);
    }
    const size_t total = static_cast<size_t>(batch_length) + kRecordBatchLogOverhead;
    DecodedBatch batch;
    batch.base_offset = static_cast<int64_t>(GetBE64(b));
    batch.leader_epoch = static_cast<int32_t>(GetBE32(b + 12));
    if (b[16] != 2) {
      return Status::Unsupported("record batch at byte {} has magic {}: only record batch v2 (magic 2) is supported",
                                 pos, static_cast<int>(b[16]));
    }
    uint32_t stored_crc = GetBE32(b + 17);
    uint32_t crc = Crc32c(b + 21, total - 21);
    if (crc != stored_crc) {
      return Status::Corrupt(
          "record batch at byte {} (base offset {}): CRC-32C mismatch (stored {:#010x}, computed "
          "{:#010x}); the batch is corrupt",
          pos, batch.base_offset, stored_crc, crc);
    }
    batch.attributes = static_cast<int16_t>(GetBE16(b + 21));
    batch.last_offset_delta = static_cast<int32_t>(GetBE32(b + 23));
    batch.base_timestamp = static_cast<int64_t>(GetBE64(b + 27));
    batch.max_timestamp = static_cast<int64_t>(GetBE64(b + 35));
    batch.producer_id = static_cast<int64_t>(GetBE64(b + 43));
    batch.producer_epoch = static_cast<int16_t>(GetBE16(b + 51));
    batch.base_sequence = static_cast<int32_t>(GetBE32(b + 53));
    int32_t count = static_cast<int32_t>(GetBE32(b + 57));
    const std::string where = fmt::format("record batch at byte {} (base offset {})", pos, batch.base_offset);
    if (batch.last_offset_delta < 0) {
      return Status::Corrupt("{}: lastOffsetDelta {} is negative", where, batch.last_offset_delta);
    }
    int64_t last_offset;
    if (__builtin_add_overflow(batch.base_offset, static_cast<int64_t>(batch.last_offset_delta), &last_offset)) {
      return Status::Corrupt("{}: base offset + lastOffsetDelta {} overflows int64", where, batch.last_offset_delta);
    }
    if (count < 0) return Status::Corrupt("{}: recordsCount {} is negative", where, count);
    int codec = batch.attributes & kAttrCompressionMask;
    if (codec > 4) {
      return Status::Unsupported("{}: unknown compression codec {} in attributes {:#06x}", where, codec,
                                 static_cast<uint16_t>(batch.attributes));
    }
    std::string_view section(b + kRecordBatchHeaderSize, total - kRecordBatchHeaderSize);
    if (codec == 0) {
      if (section.size() > options.max_records_bytes) {
        return Status::Corrupt("{}: records section of {} bytes exceeds the limit of {}", where, section.size(),
                               options.max_records_bytes);
      }
      RecordsReader rd(section, where, pos + kRecordBatchHeaderSize);
      RETURN_NOT_OK(DecodeRecords(section, count, &batch, rd));
    } else {
      decompressed.clear();
      Status st = Decompress(static_cast<Compression>(codec), section, options.max_records_bytes, &decompressed);
      if (!st.ok()) return st.WithContext(where);
      RecordsReader rd(
          decompressed,
          where + " (decompressed " + std::string(CompressionName(static_cast<Compression>(codec))) + " records)", 0);
      RETURN_NOT_OK(DecodeRecords(decompressed, count, &batch, rd));
    }
    result.batches.push_back(std::move(batch));
    pos += total;
  }
  return result;
}

Result<std::vector<DecodedBatch>> DecodeRecordBatches(std::string_view bytes) {
  ASSIGN_OR_RAISE(DecodeResult r, DecodeRecordBatches(bytes, DecodeOptions{}));
  return std::move(r.batches);
}

}  // namespace thaw::kafka

#include "thaw/kafka/protocol/record_batch.h"

#include <gtest/gtest.h>

#include <deque>
#include <random>

#include "thaw/kafka/protocol/crc32c.h"

namespace thaw::kafka {
namespace {

using kafka::TimestampType;
using Headers = std::vector<std::pair<std::string, std::optional<std::string>>>;

constexpr Compression kCodecs[] = {Compression::kNone, Compression::kGzip, Compression::kSnappy, Compression::kLz4,
                                   Compression::kZstd};

// Records whose views point into strings owned here, and the records we
// expect to decode from them.
struct Input {
  std::deque<std::string> store;
  kafka::RecordBatch batch;
  std::vector<DecodedRecord> expected;

  std::optional<std::string_view> Keep(const std::optional<std::string>& s) {
    if (!s) return std::nullopt;
    return std::string_view(store.emplace_back(*s));
  }
  void Add(int64_t offset, int64_t ts, std::optional<std::string> key, std::optional<std::string> value,
           Headers headers = {}, TimestampType tt = TimestampType::kCreateTime) {
    kafka::Record r;
    r.offset = offset;
    r.timestamp_ms = ts;
    r.timestamp_type = tt;
    r.key = Keep(key);
    r.value = Keep(value);
    r.header_begin = static_cast<uint32_t>(batch.headers.size());
    r.header_count = static_cast<uint32_t>(headers.size());
    for (const auto& [k, v] : headers) batch.headers.push_back({*Keep(k), Keep(v)});
    batch.records.push_back(r);
    expected.push_back({offset, ts, key, value, headers});
  }
  std::span<const kafka::Record> all() const { return batch.records; }
};

std::string Encode(const Input& in, Compression c, int32_t epoch = 0) {
  std::string out;
  BatchOptions o;
  o.compression = c;
  o.leader_epoch = epoch;
  Status st = AppendRecordBatch(in.all(), in.batch, o, &out);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

int64_t BE(std::string_view s, size_t at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  if (n == 2) return static_cast<int16_t>(v);
  if (n == 4) return static_cast<int32_t>(v);
  return static_cast<int64_t>(v);
}

void FixCrc(std::string* b, size_t start = 0) {
  size_t total = static_cast<size_t>(BE(*b, start + 8, 4)) + 12;
  uint32_t crc = Crc32c(b->data() + start + 21, total - 21);
  for (int i = 0; i < 4; ++i) (*b)[start + 17 + i] = static_cast<char>(crc >> (24 - 8 * i));
}

Input Varied() {
  Input in;
  std::string binary;
  for (int i = 0; i < 256; ++i) binary.push_back(static_cast<char>(i));
  in.Add(100, 1'700'000'000'000, "k1", "v1");
  in.Add(101, 1'700'000'000'005, std::nullopt, "null key");
  in.Add(105, 1'699'999'999'990, "", "empty key, gap before, earlier timestamp");
  in.Add(106, 1'700'000'000'100, "tombstone", std::nullopt);
  in.Add(107, 1'700'000'000'100, "empty value", "");
  in.Add(2000, 1'700'000'000'050, binary, binary,
         {{"h", "1"}, {"h", std::nullopt}, {"h", "3"}, {"", ""}, {"bin", binary}});
  in.Add(2001, 1'700'000'000'050, "k", "v", {{"only-null", std::nullopt}});
  return in;
}

TEST(RecordBatch, RoundTripsEveryCodecWithGapsNullsAndHeaders) {
  for (Compression c : kCodecs) {
    SCOPED_TRACE(std::string(CompressionName(c)));
    Input in = Varied();
    std::string bytes = Encode(in, c, 7);
    auto decoded = DecodeRecordBatches(bytes);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    ASSERT_EQ(decoded->size(), 1u);
    const DecodedBatch& b = (*decoded)[0];
    EXPECT_EQ(b.base_offset, 100);
    EXPECT_EQ(b.last_offset_delta, 1901);
    EXPECT_EQ(b.leader_epoch, 7);
    EXPECT_EQ(b.compression(), c);
    EXPECT_EQ(b.timestamp_type(), TimestampType::kCreateTime);
    EXPECT_EQ(b.base_timestamp, 1'700'000'000'000);
    EXPECT_EQ(b.max_timestamp, 1'700'000'000'100);
    EXPECT_EQ(b.producer_id, -1);
    EXPECT_EQ(b.producer_epoch, -1);
    EXPECT_EQ(b.base_sequence, -1);
    EXPECT_EQ(b.records, in.expected);
    ASSERT_EQ(b.records.size(), 7u);
    EXPECT_FALSE(b.records[1].key.has_value());
    EXPECT_EQ(b.records[2].key, std::optional<std::string>(""));
    EXPECT_FALSE(b.records[3].value.has_value());
    EXPECT_EQ(b.records[5].headers.size(), 5u);
  }
}

TEST(RecordBatch, HeaderFieldsSitAtTheSpecOffsets) {
  Input in;
  in.Add(42, 1000, "a", "b");
  in.Add(44, 3000, "c", "d");
  std::string s = Encode(in, Compression::kNone, 3);
  EXPECT_EQ(BE(s, 0, 8), 42);                                   // baseOffset
  EXPECT_EQ(BE(s, 8, 4), static_cast<int64_t>(s.size()) - 12);  // batchLength
  EXPECT_EQ(BE(s, 12, 4), 3);                                   // partitionLeaderEpoch
  EXPECT_EQ(s[16], 2);                                          // magic
  EXPECT_EQ(static_cast<uint32_t>(BE(s, 17, 4)), Crc32c(s.data() + 21, s.size() - 21));
  EXPECT_EQ(BE(s, 21, 2), 0);     // attributes
  EXPECT_EQ(BE(s, 23, 4), 2);     // lastOffsetDelta
  EXPECT_EQ(BE(s, 27, 8), 1000);  // baseTimestamp
  EXPECT_EQ(BE(s, 35, 8), 3000);  // maxTimestamp
  EXPECT_EQ(BE(s, 43, 8), -1);    // producerId
  EXPECT_EQ(BE(s, 51, 2), -1);    // producerEpoch
  EXPECT_EQ(BE(s, 53, 4), -1);    // baseSequence
  EXPECT_EQ(BE(s, 57, 4), 2);     // recordsCount
  // First record: length 8 (zig-zag 16), attributes 0, timestamp delta 0,
  // offset delta 0, key length 1 (zig-zag 2) "a", value length 1 "b", 0 headers.
  EXPECT_EQ(s.substr(61, 9), std::string("\x10\x00\x00\x00\x02"
                                         "a"
                                         "\x02"
                                         "b"
                                         "\x00",
                                         9));
  // Second: length 9, timestamp delta 2000 = zig-zag 4000 = varint a0 1f, offset delta 2 (zig-zag 4).
  EXPECT_EQ(s.substr(70, 10), std::string("\x12\x00\xa0\x1f\x04\x02"
                                          "c"
                                          "\x02"
                                          "d"
                                          "\x00",
                                          10));
  EXPECT_EQ(s.size(), 80u);
  // Compressed batches set the codec bits.
  for (Compression c : kCodecs) EXPECT_EQ(BE(Encode(in, c), 21, 2), static_cast<int>(c));
}

TEST(RecordBatch, WithLeaderEpochSharesWhatCarriesItAndCopiesTheRest) {
  Input in;
  in.Add(42, 1000, "a", "b");
  auto batch = std::make_shared<const std::string>(Encode(in, Compression::kZstd, 3));
  EXPECT_EQ(WithLeaderEpoch(batch, 3).get(), batch.get());
  auto cleared = WithLeaderEpoch(batch, -1);
  ASSERT_NE(cleared.get(), batch.get());
  EXPECT_EQ(BE(*batch, 12, 4), 3) << "the original is left as it was";
  EXPECT_EQ(BE(*cleared, 12, 4), -1);
  EXPECT_EQ(cleared->substr(16), batch->substr(16));
  auto decoded = DecodeRecordBatches(*cleared);  // the CRC still holds
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ((*decoded)[0].leader_epoch, -1);
  EXPECT_EQ(WithLeaderEpoch(cleared, -1).get(), cleared.get());
}

TEST(RecordBatch, LogAppendTimeSetsTheBitAndReportsMaxTimestamp) {
  Input in;
  in.Add(0, 5000, "a", "1", {}, TimestampType::kLogAppendTime);
  in.Add(1, 5000, "b", "2", {}, TimestampType::kLogAppendTime);
  std::string s = Encode(in, Compression::kLz4);
  EXPECT_EQ(BE(s, 21, 2), 0x08 | 3);
  auto d = DecodeRecordBatches(s);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ((*d)[0].timestamp_type(), TimestampType::kLogAppendTime);
  EXPECT_EQ((*d)[0].max_timestamp, 5000);
  EXPECT_EQ((*d)[0].records, in.expected);

  // A LogAppendTime batch with two timestamps would misreport one of them.
  Input mixed;
  mixed.Add(0, 5000, "a", "1", {}, TimestampType::kLogAppendTime);
  mixed.Add(1, 5000, "a", "1", {}, TimestampType::kLogAppendTime);
  mixed.Add(2, 6000, "b", "2", {}, TimestampType::kLogAppendTime);
  std::string out;
  Status st = AppendRecordBatch(mixed.all(), mixed.batch, {}, &out);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("LogAppendTime"), std::string::npos) << st.message();
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(BatchableRun(mixed.all()), 2u);
}

TEST(RecordBatch, DecodesLogAppendTimeBatchesAsKafkaConsumersDo) {
  // A broker-stamped batch keeps the producer's deltas but consumers see
  // maxTimestamp for every record: set the bit on a CreateTime batch.
  Input in;
  in.Add(0, 1000, "a", "1");
  in.Add(1, 2000, "b", "2");
  std::string s = Encode(in, Compression::kNone);
  s[22] |= 0x08;
  s.replace(35, 8, std::string("\0\0\0\0\0\0\x27\x10", 8));  // maxTimestamp 10000
  FixCrc(&s);
  auto d = DecodeRecordBatches(s);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ((*d)[0].records[0].timestamp_ms, 10000);
  EXPECT_EQ((*d)[0].records[1].timestamp_ms, 10000);
}

TEST(RecordBatch, RejectsWhatOneBatchCannotHold) {
  std::string out;
  kafka::RecordBatch owner;
  EXPECT_EQ(AppendRecordBatch({}, owner, {}, &out).code(), StatusCode::kInvalidArgument);

  Input desc;
  desc.Add(5, 0, "a", "a");
  desc.Add(5, 0, "a", "a");
  Status st = AppendRecordBatch(desc.all(), desc.batch, {}, &out);
  EXPECT_NE(st.message().find("ascend"), std::string::npos) << st.message();

  Input types;
  types.Add(0, 0, "a", "a");
  types.Add(1, 0, "a", "a", {}, TimestampType::kLogAppendTime);
  st = AppendRecordBatch(types.all(), types.batch, {}, &out);
  EXPECT_NE(st.message().find("timestamp type"), std::string::npos) << st.message();
  EXPECT_EQ(BatchableRun(types.all()), 1u);

  Input far;
  far.Add(0, 0, "a", "a");
  far.Add(int64_t{1} << 31, 0, "a", "a");
  st = AppendRecordBatch(far.all(), far.batch, {}, &out);
  EXPECT_NE(st.message().find("too far apart"), std::string::npos) << st.message();
  EXPECT_EQ(BatchableRun(far.all()), 1u);
  EXPECT_TRUE(out.empty());

  Input ok;
  ok.Add(0, 0, "a", "a");
  ok.Add(INT32_MAX, 0, "a", "a");
  EXPECT_TRUE(AppendRecordBatch(ok.all(), ok.batch, {}, &out).ok());
  EXPECT_EQ(BatchableRun(ok.all()), 2u);
}

TEST(RecordBatch, BigValuesRoundTrip) {
  std::mt19937_64 rng(1);
  std::string big(10 << 20, '\0');
  for (size_t i = 0; i < big.size(); i += 8) big[i] = static_cast<char>(rng());  // compressible, not trivial
  for (Compression c : kCodecs) {
    SCOPED_TRACE(std::string(CompressionName(c)));
    Input in;
    in.Add(0, 1, "small", "x");
    in.Add(1, 2, "big", big, {{"big-header", big.substr(0, 1 << 20)}});
    std::string s = Encode(in, c);
    auto d = DecodeRecordBatches(s);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_TRUE((*d)[0].records == in.expected);
  }
}

TEST(RecordBatch, BatchesBackToBackAndAppendToExistingBytes) {
  Input a = Varied();
  Input b;
  b.Add(9000, 1, "x", "y");
  std::string s = "";
  BatchOptions o;
  o.compression = Compression::kZstd;
  ASSERT_TRUE(AppendRecordBatch(a.all(), a.batch, o, &s).ok());
  o.compression = Compression::kNone;
  ASSERT_TRUE(AppendRecordBatch(b.all(), b.batch, o, &s).ok());
  auto d = DecodeRecordBatches(s);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_EQ(d->size(), 2u);
  EXPECT_EQ((*d)[0].records, a.expected);
  EXPECT_EQ((*d)[1].records, b.expected);
  EXPECT_EQ((*d)[1].base_offset, 9000);
}

// Uncompressed batches appended to a string that must grow each time (its
// capacity exactly its size): the encoder writes in place without zeroing,
// and must size the string itself (GCC 12's resize_and_overwrite hands the
// operation the grown capacity, not the size asked for).
TEST(RecordBatch, UncompressedBatchesAppendedToAStringThatGrows) {
  std::vector<Input> inputs(3);
  for (int k = 0; k < 3; ++k) {
    for (int i = 0; i < 7 + k; ++i) inputs[k].Add(100 * k + i, 1, "k" + std::to_string(i), std::string(40 + i, 'v'));
  }
  std::string s = "prefix";
  BatchOptions o;
  o.compression = Compression::kNone;
  for (auto& in : inputs) {
    s.shrink_to_fit();
    ASSERT_TRUE(AppendRecordBatch(in.all(), in.batch, o, &s).ok());
  }
  ASSERT_EQ(s.rfind("prefix", 0), 0u);
  auto d = DecodeRecordBatches(std::string_view(s).substr(6));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_EQ(d->size(), 3u);
  for (int k = 0; k < 3; ++k) EXPECT_EQ((*d)[k].records, inputs[k].expected) << k;
}

TEST(RecordBatch, CrcCoversAttributesToTheEndButNotBaseOffsetOrEpoch) {
  for (Compression c : kCodecs) {
    SCOPED_TRACE(std::string(CompressionName(c)));
    std::string s = Encode(Varied(), c);
    std::string moved = s;
    moved[7] ^= 0x10;   // baseOffset
    moved[15] ^= 0x01;  // partitionLeaderEpoch
    EXPECT_TRUE(DecodeRecordBatches(moved).ok());
    for (size_t at : {size_t{22}, size_t{30}, size_t{60}, s.size() / 2, s.size() - 1}) {
      std::string bad = s;
      bad[at] ^= 0x01;
      auto d = DecodeRecordBatches(bad);
      ASSERT_FALSE(d.ok()) << "flip at " << at;
      EXPECT_EQ(d.status().code(), StatusCode::kCorrupt);
      EXPECT_NE(d.status().message().find("CRC-32C mismatch"), std::string::npos) << d.status().message();
      EXPECT_NE(d.status().message().find("at byte 0"), std::string::npos) << d.status().message();
    }
  }
}

TEST(RecordBatch, TruncationIsReportedAsAPartialTrailingBatch) {
  Input a = Varied();
  std::string first = Encode(a, Compression::kNone);
  std::string two = first + Encode(a, Compression::kGzip);
  for (size_t cut = first.size() + 1; cut < two.size(); cut += 7) {
    std::string_view v(two.data(), cut);
    auto strict = DecodeRecordBatches(v);
    ASSERT_FALSE(strict.ok()) << cut;
    EXPECT_NE(strict.status().message().find(fmt::format("truncated record batch at byte {}", first.size())),
              std::string::npos)
        << strict.status().message();
    DecodeOptions o;
    o.allow_partial_tail = true;
    auto lenient = DecodeRecordBatches(v, o);
    ASSERT_TRUE(lenient.ok()) << lenient.status().ToString();
    ASSERT_EQ(lenient->batches.size(), 1u);
    EXPECT_EQ(lenient->batches[0].records, a.expected);
    EXPECT_EQ(lenient->partial_tail_offset, first.size());
    EXPECT_EQ(lenient->partial_tail_bytes, cut - first.size());
  }
  DecodeOptions o;
  o.allow_partial_tail = true;
  auto whole = DecodeRecordBatches(two, o);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->partial_tail_bytes, 0u);
  EXPECT_EQ(whole->batches.size(), 2u);
}

// Uncompressed batch whose records section is replaced by `section` (CRC
// and lengths fixed so that only the records are wrong).
std::string WithSection(std::string_view section, int32_t count) {
  Input in;
  in.Add(0, 0, "k", "v");
  std::string s = Encode(in, Compression::kNone).substr(0, 61) + std::string(section);
  uint32_t len = static_cast<uint32_t>(s.size() - 12);
  for (int i = 0; i < 4; ++i) s[8 + i] = static_cast<char>(len >> (24 - 8 * i));
  for (int i = 0; i < 4; ++i) s[57 + i] = static_cast<char>(static_cast<uint32_t>(count) >> (24 - 8 * i));
  FixCrc(&s);
  return s;
}

std::string ErrorOf(std::string_view bytes) {
  auto d = DecodeRecordBatches(bytes);
  EXPECT_FALSE(d.ok());
  return d.ok() ? "" : d.status().message();
}

TEST(RecordBatch, CorruptRecordsSayWhatAndWhere) {
  // Valid record: length 8, attributes, ts 0, offset 0, key "k", value "v", 0 headers.
  const std::string good("\x10\x00\x00\x00\x02k\x02v\x00", 9);
  EXPECT_TRUE(DecodeRecordBatches(WithSection(good, 1)).ok());
  // Key length 100 (zig-zag 200 = c8 01) in a 9-byte record; the key length sits at byte 61 + 4.
  std::string m = ErrorOf(WithSection(std::string("\x12\x00\x00\x00\xc8\x01k\x02v\x00", 10), 1));
  EXPECT_NE(m.find("key length 100 exceeds the 4 bytes left"), std::string::npos) << m;
  EXPECT_NE(m.find("records byte 65"), std::string::npos) << m;
  // Key length -2.
  m = ErrorOf(WithSection(std::string("\x10\x00\x00\x00\x03k\x02v\x00", 9), 1));
  EXPECT_NE(m.find("key length -2 is negative"), std::string::npos) << m;
  // Record length says 9 but fields take 8.
  m = ErrorOf(WithSection(std::string("\x12\x00\x00\x00\x02k\x02v\x00\x00", 10), 1));
  EXPECT_NE(m.find("declares 9 bytes but its fields take 8"), std::string::npos) << m;
  // Record length past the end.
  m = ErrorOf(WithSection(std::string("\x7e\x00\x00\x00\x02k\x02v\x00", 9), 1));
  EXPECT_NE(m.find("declares length 63 but 8 bytes remain"), std::string::npos) << m;
  // Varint longer than 5 bytes.
  m = ErrorOf(WithSection(std::string("\x10\x00\x00\xff\xff\xff\xff\xff\x01", 9), 1));
  EXPECT_NE(m.find("offset delta varint is longer than 5 bytes"), std::string::npos) << m;
  // recordsCount larger than the section could hold.
  m = ErrorOf(WithSection(good, 1000));
  EXPECT_NE(m.find("recordsCount 1000"), std::string::npos) << m;
  // Extra bytes after the declared records.
  m = ErrorOf(WithSection(good + good, 1));
  EXPECT_NE(m.find("9 bytes follow the last"), std::string::npos) << m;
  // Negative header count; null header key.
  m = ErrorOf(WithSection(std::string("\x10\x00\x00\x00\x02k\x02v\x01", 9), 1));
  EXPECT_NE(m.find("header count -1"), std::string::npos) << m;
  m = ErrorOf(WithSection(std::string("\x14\x00\x00\x00\x02k\x02v\x02\x01\x01", 11), 1));
  EXPECT_NE(m.find("header key length -1 is negative"), std::string::npos) << m;
  // Offset deltas must ascend.
  m = ErrorOf(WithSection(good + good, 2));
  EXPECT_NE(m.find("record 1 has offset delta 0"), std::string::npos) << m;
}

TEST(RecordBatch, RejectsOtherMagicsAndCodecsAndBadLengths) {
  std::string s = Encode(Varied(), Compression::kNone);
  std::string v1 = s;
  v1[16] = 1;
  auto d = DecodeRecordBatches(v1);
  EXPECT_EQ(d.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(d.status().message().find("magic 1"), std::string::npos);

  std::string codec = s;
  codec[22] = 5;
  FixCrc(&codec);
  d = DecodeRecordBatches(codec);
  EXPECT_NE(d.status().message().find("unknown compression codec 5"), std::string::npos) << d.status().message();

  std::string shortlen = s;
  shortlen.replace(8, 4, std::string("\0\0\0\x10", 4));
  d = DecodeRecordBatches(shortlen);
  EXPECT_NE(d.status().message().find("batchLength 16 is below the minimum 49"), std::string::npos)
      << d.status().message();
}

TEST(RecordBatch, DecompressionBombFailsWithinTheLimit) {
  Input in;
  in.Add(0, 0, "k", std::string(8 << 20, 'z'));
  for (Compression c : kCodecs) {
    SCOPED_TRACE(std::string(CompressionName(c)));
    std::string s = Encode(in, c);
    DecodeOptions o;
    o.max_records_bytes = 1 << 20;
    auto d = DecodeRecordBatches(s, o);
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.status().code(), StatusCode::kCorrupt);
    EXPECT_NE(d.status().message().find("1048576"), std::string::npos) << d.status().message();
    o.max_records_bytes = 9 << 20;
    EXPECT_TRUE(DecodeRecordBatches(s, o).ok());
  }
}

TEST(Compression, ParsesAndNamesCodecs) {
  for (Compression c : kCodecs) EXPECT_EQ(*ParseCompression(CompressionName(c)), c);
  EXPECT_EQ(*ParseCompression("ZSTD"), Compression::kZstd);
  auto bad = ParseCompression("brotli");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("none, gzip, snappy, lz4 or zstd"), std::string::npos);
}

}  // namespace
}  // namespace thaw::kafka

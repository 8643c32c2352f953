#include "thaw/kafka/protocol/wire.h"

#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <vector>

#include "test_hex.h"

namespace thaw::kafka {
namespace {

using thaw::testing::Hex;

TEST(WireWriter, IntegersAreBigEndian) {
  WireWriter w;
  w.WriteInt8(-2);
  w.WriteInt16(0x0102);
  w.WriteInt32(-1);
  w.WriteInt64(0x0102030405060708);
  w.WriteUint16(0xfffe);
  w.WriteUint32(0x80000001u);
  w.WriteBool(true);
  w.WriteFloat64(1.5);
  EXPECT_EQ(Hex(w.data()), "fe0102ffffffff0102030405060708fffe80000001013ff8000000000000");
  WireReader r(w.data());
  int8_t i8;
  int16_t i16;
  int32_t i32;
  int64_t i64;
  uint16_t u16;
  uint32_t u32;
  bool b;
  double d;
  ASSERT_TRUE(r.ReadInt8(&i8, "a").ok());
  ASSERT_TRUE(r.ReadInt16(&i16, "b").ok());
  ASSERT_TRUE(r.ReadInt32(&i32, "c").ok());
  ASSERT_TRUE(r.ReadInt64(&i64, "d").ok());
  ASSERT_TRUE(r.ReadUint16(&u16, "e").ok());
  ASSERT_TRUE(r.ReadUint32(&u32, "f").ok());
  ASSERT_TRUE(r.ReadBool(&b, "g").ok());
  ASSERT_TRUE(r.ReadFloat64(&d, "h").ok());
  EXPECT_EQ(i8, -2);
  EXPECT_EQ(i16, 0x0102);
  EXPECT_EQ(i32, -1);
  EXPECT_EQ(i64, 0x0102030405060708);
  EXPECT_EQ(u16, 0xfffe);
  EXPECT_EQ(u32, 0x80000001u);
  EXPECT_TRUE(b);
  EXPECT_EQ(d, 1.5);
  EXPECT_TRUE(r.done());
}

TEST(WireWriter, VarintsMatchKafkaEncoding) {
  // Values and encodings from Kafka's ByteUtils (zig-zag for signed varints).
  struct Case {
    int64_t v;
    const char* hex;
  };
  for (const Case& c : {Case{0, "00"}, Case{-1, "01"}, Case{1, "02"}, Case{63, "7e"}, Case{-64, "7f"}, Case{64, "8001"},
                        Case{300, "d804"}, Case{std::numeric_limits<int32_t>::max(), "feffffff0f"},
                        Case{std::numeric_limits<int32_t>::min(), "ffffffff0f"}}) {
    WireWriter w;
    w.WriteVarint(static_cast<int32_t>(c.v));
    EXPECT_EQ(Hex(w.data()), c.hex) << c.v;
    WireReader r(w.data());
    int32_t got;
    ASSERT_TRUE(r.ReadVarint(&got, "v").ok());
    EXPECT_EQ(got, c.v);
  }
  WireWriter w;
  w.WriteVarlong(std::numeric_limits<int64_t>::min());
  EXPECT_EQ(Hex(w.data()), "ffffffffffffffffff01");
  WireReader r(w.data());
  int64_t got;
  ASSERT_TRUE(r.ReadVarlong(&got, "v").ok());
  EXPECT_EQ(got, std::numeric_limits<int64_t>::min());

  WireWriter u;
  u.WriteUnsignedVarint(0xffffffffu);
  EXPECT_EQ(Hex(u.data()), "ffffffff0f");
}

TEST(WireReader, OverlongVarintsAreCorrupt) {
  std::string six("\xff\xff\xff\xff\xff\x01", 6);
  WireReader r(six);
  uint32_t v;
  Status st = r.ReadUnsignedVarint(&v, "X.count");
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_NE(st.message().find("X.count"), std::string::npos) << st.message();
  // A fifth byte above 0x0f would overflow 32 bits.
  std::string over("\xff\xff\xff\xff\x10", 5);
  WireReader r2(over);
  EXPECT_FALSE(r2.ReadUnsignedVarint(&v, "x").ok());
  std::string eleven(11, '\xff');
  WireReader r3(eleven);
  int64_t l;
  EXPECT_FALSE(r3.ReadVarlong(&l, "x").ok());
}

TEST(WireStrings, ClassicAndCompactNullAndEmpty) {
  WireWriter w;
  w.WriteString("ab", false);
  w.WriteString("", false);
  w.WriteNullableString(std::nullopt, false);
  w.WriteString("ab", true);
  w.WriteString("", true);
  w.WriteNullableString(std::nullopt, true);
  w.WriteBytes("ab", false);
  w.WriteNullableBytes(std::nullopt, false);
  w.WriteNullableBytes(std::string(), true);
  EXPECT_EQ(Hex(w.data()),
            "00026162"
            "0000"
            "ffff"
            "036162"
            "01"
            "00"
            "000000026162"
            "ffffffff"
            "01");
  WireReader r(w.data());
  std::optional<std::string> s;
  ASSERT_TRUE(r.ReadNullableString(&s, false, true, "s").ok());
  EXPECT_EQ(s, "ab");
  ASSERT_TRUE(r.ReadNullableString(&s, false, true, "s").ok());
  EXPECT_EQ(s, "");
  ASSERT_TRUE(r.ReadNullableString(&s, false, true, "s").ok());
  EXPECT_EQ(s, std::nullopt);
  ASSERT_TRUE(r.ReadNullableString(&s, true, true, "s").ok());
  EXPECT_EQ(s, "ab");
  ASSERT_TRUE(r.ReadNullableString(&s, true, true, "s").ok());
  EXPECT_EQ(s, "");
  // Null where the field is not nullable: an error naming the field.
  size_t at = r.offset();
  Status st = r.ReadNullableString(&s, true, false, "Msg.Name");
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_NE(st.message().find("Msg.Name is null at byte offset " + std::to_string(at)), std::string::npos)
      << st.message();
  std::string b;
  ASSERT_TRUE(r.ReadBytes(&b, false, "b").ok());
  EXPECT_EQ(b, "ab");
  ASSERT_TRUE(r.ReadNullableBytes(&s, false, true, "b").ok());
  EXPECT_EQ(s, std::nullopt);
  ASSERT_TRUE(r.ReadNullableBytes(&s, true, true, "b").ok());
  EXPECT_EQ(s, "");
  EXPECT_TRUE(r.done());
}

TEST(WireStrings, LongClassicStringIsAWriterErrorNotBadBytes) {
  WireWriter w;
  w.WriteString(std::string(40000, 'x'), false);
  EXPECT_FALSE(w.status().ok());
  EXPECT_NE(w.status().message().find("32767"), std::string::npos);
  WireWriter c;
  c.WriteString(std::string(40000, 'x'), true);
  EXPECT_TRUE(c.status().ok());
  EXPECT_EQ(c.size(), 40000u + 3);
}

TEST(WireReader, LengthsAreCheckedBeforeReading) {
  // A string claiming 1000 bytes with 3 present.
  std::string data(
      "\x03\xe8"
      "abc",
      5);
  WireReader r(data, 100);
  std::string s;
  Status st = r.ReadString(&s, false, "Req.ClientId");
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_NE(st.message().find("Req.ClientId has length 1000 at byte offset 100 but only 3 bytes remain"),
            std::string::npos)
      << st.message();
}

TEST(WireReader, HugeArrayCountFailsBeforeAllocating) {
  // 2^31-1 elements of at least 4 bytes each, with 8 bytes left.
  std::string data(
      "\x7f\xff\xff\xff"
      "12345678",
      12);
  WireReader r(data);
  int32_t n = 0;
  Status st = r.ReadArrayLength(&n, false, 4, "Req.Topics");
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_NE(st.message().find("Req.Topics has 2147483647 elements (at least 4 bytes each) at byte offset 0"),
            std::string::npos)
      << st.message();
  // Two 4-byte elements fit exactly.
  std::string ok(
      "\x00\x00\x00\x02"
      "12345678",
      12);
  WireReader r2(ok);
  ASSERT_TRUE(r2.ReadArrayLength(&n, false, 4, "a").ok());
  EXPECT_EQ(n, 2);
  // Negative counts other than -1 are corrupt; -1 is null.
  std::string neg("\xff\xff\xff\xfe", 4);
  WireReader r3(neg);
  EXPECT_FALSE(r3.ReadArrayLength(&n, false, 1, "a").ok());
  std::string null_count("\xff\xff\xff\xff", 4);
  WireReader r4(null_count);
  ASSERT_TRUE(r4.ReadArrayLength(&n, false, 1, "a").ok());
  EXPECT_EQ(n, -1);
  WireReader r5(null_count);
  EXPECT_FALSE(r5.ReadNonNullArrayLength(&n, false, 1, "a").ok());
  // A compact count above 2^31-1 (uvarint 2^32-1 -> 2^32-2 elements) is corrupt whatever remains.
  std::string too_many("\xff\xff\xff\xff\x0f", 5);
  WireReader r7(too_many);
  EXPECT_EQ(r7.ReadArrayLength(&n, true, 1, "a").code(), StatusCode::kCorrupt);
  // Compact: 0 is null, 1 is empty.
  std::string compact("\x00\x01", 2);
  WireReader r6(compact);
  ASSERT_TRUE(r6.ReadArrayLength(&n, true, 1, "a").ok());
  EXPECT_EQ(n, -1);
  ASSERT_TRUE(r6.ReadArrayLength(&n, true, 1, "a").ok());
  EXPECT_EQ(n, 0);
}

TEST(WireReader, TruncatedIntegerSaysWhatAndWhere) {
  std::string data("\x00\x01\x02", 3);
  WireReader r(data);
  int16_t a;
  ASSERT_TRUE(r.ReadInt16(&a, "a").ok());
  int64_t b;
  Status st = r.ReadInt64(&b, "FetchRequest.FetchPartition.FetchOffset");
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(),
            "Kafka message truncated: FetchRequest.FetchPartition.FetchOffset needs 8 bytes at byte offset 2 but "
            "only 1 remain");
}

TEST(WireWriter, SharedBytesStayInPlaceUntilCopiedIn) {
  auto shared = std::make_shared<const std::string>("SHARED");
  WireWriter w;
  w.WriteInt8(1);
  w.WriteShared(shared);
  w.WriteShared(std::make_shared<const std::string>());  // empty: nothing
  w.WriteInt8(2);
  EXPECT_EQ(w.size(), 8u);
  std::vector<std::string_view> pieces;
  w.ForEachPiece([&](std::string_view p) { pieces.push_back(p); });
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[1].data(), shared->data());
  EXPECT_EQ(std::string(pieces[0]) + std::string(pieces[1]) + std::string(pieces[2]), "\x01SHARED\x02");

  // Appended to another writer, still by reference.
  WireWriter outer;
  outer.WriteInt8(0);
  outer.Append(w);
  pieces.clear();
  outer.ForEachPiece([&](std::string_view p) { pieces.push_back(p); });
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[1].data(), shared->data());
  EXPECT_EQ(outer.size(), 9u);
  // data() copies it in; later writes go after it.
  EXPECT_EQ(outer.data(), std::string("\x00\x01SHARED\x02", 9));
  outer.WriteInt8(3);
  EXPECT_EQ(outer.Take(), std::string("\x00\x01SHARED\x02\x03", 10));
}

TEST(WireWriter, RecordsNullOnlyWithoutAnyBytes) {
  WireWriter w;
  w.WriteNullableRecords(std::nullopt, {}, false);
  w.WriteNullableRecords(std::nullopt, {}, true);
  w.WriteNullableRecords(std::nullopt, {std::make_shared<const std::string>("ab")}, true);
  w.WriteNullableRecords(std::string("x"), {std::make_shared<const std::string>("ab")}, false);
  EXPECT_EQ(Hex(w.Take()), Hex(std::string("\xff\xff\xff\xff" "\x00" "\x03" "ab" "\x00\x00\x00\x03" "xab", 15)));
}

TEST(Uuid, TextForms) {
  Uuid u;
  for (size_t i = 0; i < 16; ++i) u.bytes[i] = static_cast<uint8_t>(i * 17);
  EXPECT_EQ(u.ToHex(), "00112233-4455-6677-8899-aabbccddeeff");
  // Kafka's Uuid.toString(): URL-safe base64 without padding.
  EXPECT_EQ(u.ToString(), "ABEiM0RVZneImaq7zN3u_w");
  EXPECT_FALSE(u.IsZero());
  EXPECT_TRUE(Uuid{}.IsZero());
  EXPECT_EQ(Uuid{}.ToString(), "AAAAAAAAAAAAAAAAAAAAAA");
}

}  // namespace
}  // namespace thaw::kafka

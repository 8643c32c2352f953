// Arrow first: its headers define a RETURN_NOT_OK of their own.
#include "thaw/records/avro_value.h"

#include <arrow/api.h>
#include <arrow/json/from_string.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "test_hex.h"

namespace thaw::records {
namespace {

using thaw::testing::Hex;
using thaw::testing::Unhex;

// Hex text with spaces between the parts of a datum, without the spaces.
std::string NoSpace(std::string_view hex) {
  std::string out;
  for (char c : hex) {
    if (c != ' ') out.push_back(c);
  }
  return out;
}

std::string Bytes(std::string_view spaced_hex) { return Unhex(NoSpace(spaced_hex)); }

std::string ReadResource(const std::string& name) {
  std::ifstream in(std::filesystem::path(THAW_SOURCE_DIR) / "tests/unit/records/resources" / name);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::shared_ptr<const AvroValueSchema> MakeSchema(const std::string& json, int32_t first_id = 100) {
  auto s = AvroValueSchema::Make(json, first_id);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : nullptr;
}

std::string SchemaError(const std::string& json) {
  auto s = AvroValueSchema::Make(json, 100);
  return s.ok() ? "ok" : s.status().message();
}

// Decodes each datum into one array; returns the array.
std::shared_ptr<arrow::StructArray> DecodeAll(const AvroValueSchema& s, const std::vector<std::string>& datums,
                                              bool framed = false) {
  auto b = s.MakeBuilder();
  EXPECT_TRUE(b.ok());
  for (const auto& d : datums) {
    Status st = s.Decode(d, framed, b->get());
    EXPECT_TRUE(st.ok()) << st.ToString() << " for " << Hex(d);
  }
  std::shared_ptr<arrow::Array> out;
  EXPECT_TRUE((*b)->Finish(&out).ok());
  EXPECT_TRUE(out->ValidateFull().ok());
  return std::static_pointer_cast<arrow::StructArray>(out);
}

std::string EncodeRow(const AvroValueSchema& s, const arrow::StructArray& a, int64_t row,
                      std::optional<int32_t> id = std::nullopt) {
  std::string out;
  Status st = s.Encode(a, row, id, &out);
  return st.ok() ? out : "error: " + st.message();
}

// The message of decoding `datum` (hex), or "ok"; checks that a failed
// decode appended nothing.
std::string DecodeError(const AvroValueSchema& s, const std::string& hex, bool framed = false) {
  auto b = s.MakeBuilder();
  Status st = s.Decode(Bytes(hex), framed, b->get());
  EXPECT_EQ((*b)->length(), st.ok() ? 1 : 0);
  for (int i = 0; i < (*b)->num_fields(); ++i) EXPECT_EQ((*b)->field_builder(i)->length(), st.ok() ? 1 : 0);
  return st.ok() ? "ok" : st.message();
}

std::string Field(const arrow::StructArray& a, const char* name, int64_t row) {
  auto f = a.GetFieldByName(name);
  EXPECT_NE(f, nullptr) << name;
  auto sc = f->GetScalar(row);
  return sc.ok() ? (*sc)->ToString() : sc.status().ToString();
}

constexpr char kSmall[] = R"({"type": "record", "name": "R", "fields": [
  {"name": "a", "type": "int"}, {"name": "b", "type": "string"}]})";

TEST(AvroValue, MapsEveryAvroTypeToIcebergWithDepthFirstIds) {
  auto s = MakeSchema(ReadResource("avro_value_all_types.avsc"));
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->iceberg_type()->ToString(),
            "struct<id: long, name: string, active: boolean, count: int, ratio: float, score: double, "
            "payload: binary, color: string, hash: fixed[4], price: decimal(10,2), amount: decimal(18,4), "
            "day: date, t_ms: time, t_us: time, ts_ms: timestamptz, ts_us: timestamptz, local_ts: timestamp, "
            "uid: string, note: string, rank: long, address: struct<street: string, zip: int>, "
            "tags: list<string>, attrs: map<string, double>, "
            "choice: struct<tag: int, field0: string, field1: long, field2: struct<street: string, zip: int>>, "
            "stops: list<struct<street: string, zip: int>>, inner: struct<x: int>>");
  // Pre-order ids from 100, every field, element, key and value once.
  std::vector<std::pair<int32_t, std::string>> ids;
  std::function<void(const iceberg::Type&, const std::string&)> walk = [&](const iceberg::Type& t,
                                                                           const std::string& p) {
    for (const auto& f : t.fields) {
      ids.emplace_back(f.id, p + f.name + (f.required ? "" : "?"));
      walk(*f.type, p + f.name + ".");
    }
  };
  walk(*s->iceberg_type(), "");
  ASSERT_EQ(ids.size(), 41u);
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(ids[i].first, 100 + static_cast<int32_t>(i)) << ids[i].second;
  EXPECT_EQ(s->last_field_id(), 140);
  EXPECT_EQ(ids[0].second, "id");
  EXPECT_EQ(ids[18].second, "note?");
  EXPECT_EQ(ids[19].second, "rank?");
  EXPECT_EQ(ids[21].second, "address.street");
  EXPECT_EQ(ids[22].second, "address.zip?");
  EXPECT_EQ(ids[26].second, "attrs.key");
  EXPECT_EQ(ids[27].second, "attrs.value?");
  EXPECT_EQ(ids[28].second, "choice?");
  EXPECT_EQ(ids[29].second, "choice.tag");
  EXPECT_EQ(ids[32].second, "choice.field2?");
  EXPECT_EQ(ids[40].second, "inner.x");
  // The Arrow type carries the same ids for Parquet.
  const auto& st = static_cast<const arrow::StructType&>(*s->arrow_type());
  EXPECT_EQ(st.field(0)->metadata()->Get("PARQUET:field_id").ValueOr(""), "100");
  EXPECT_FALSE(st.field(0)->nullable());
  EXPECT_TRUE(st.GetFieldByName("note")->nullable());
  EXPECT_EQ(st.GetFieldByName("ts_ms")->type()->ToString(), "timestamp[us, tz=UTC]");
  EXPECT_EQ(st.GetFieldByName("local_ts")->type()->ToString(), "timestamp[us]");
  const auto& attrs = static_cast<const arrow::MapType&>(*st.GetFieldByName("attrs")->type());
  EXPECT_EQ(attrs.key_field()->metadata()->Get("PARQUET:field_id").ValueOr(""), "126");
  EXPECT_EQ(attrs.item_field()->metadata()->Get("PARQUET:field_id").ValueOr(""), "127");
}

TEST(AvroValue, SchemasIcebergCannotHoldAreRejectedNamingTheField) {
  EXPECT_EQ(SchemaError(R"("string")"),
            "Avro value schema: the top level must be a record (its fields become the value columns), not \"string\"");
  EXPECT_EQ(SchemaError(R"({"type": "record", "name": "R", "fields": [{"name": "n", "type": "null"}]})"),
            "Avro value schema: n has type null, which Iceberg cannot hold");
  EXPECT_EQ(SchemaError(R"({"type": "record", "name": "R", "fields": [{"name": "u", "type": ["null"]}]})"),
            "Avro value schema: u is a union of null alone, which Iceberg cannot hold");
  EXPECT_EQ(SchemaError(R"({"type": "record", "name": "R", "fields": [{"name": "e",
              "type": {"type": "record", "name": "E", "fields": []}}]})"),
            "Avro value schema: e is record 'E' with no fields, which Parquet cannot store");
  EXPECT_EQ(SchemaError(R"({"type": "record", "name": "R", "fields": [{"name": "a", "type": {"type": "array",
              "items": {"type": "fixed", "name": "F", "size": 0}}}]})"),
            "Avro value schema: a.element is fixed 'F' of size 0, which Parquet cannot store");
  EXPECT_EQ(SchemaError(R"({"type": "record", "name": "R", "fields": [{"name": "r", "type": "R"}]})"),
            "invalid Avro schema at $.r: recursive type 'R' is not supported");
  // A decimal wider than Iceberg's 38 digits stays bytes.
  auto wide = MakeSchema(R"({"type": "record", "name": "R", "fields": [{"name": "d",
      "type": {"type": "bytes", "logicalType": "decimal", "precision": 40, "scale": 2}}]})");
  ASSERT_NE(wide, nullptr);
  EXPECT_EQ(wide->iceberg_type()->ToString(), "struct<d: binary>");
}

// Bytes written by Apache Avro's Java implementation (AvroVectors.java) for
// the datums of avro_value_datums.jsonl.
TEST(AvroValue, DecodesJavaWrittenDatumsAndEncodesThemBackByteForByte) {
  auto s = MakeSchema(ReadResource("avro_value_all_types.avsc"));
  ASSERT_NE(s, nullptr);
  std::vector<std::string> datums;
  std::istringstream lines(ReadResource("avro_value_java.hex"));
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) datums.push_back(Bytes(line));
  }
  ASSERT_EQ(datums.size(), 4u);
  auto a = DecodeAll(*s, datums);
  ASSERT_EQ(a->length(), 4);
  for (int64_t r = 0; r < a->length(); ++r) EXPECT_EQ(Hex(EncodeRow(*s, *a, r)), Hex(datums[r])) << "row " << r;

  EXPECT_EQ(Field(*a, "id", 0), "1");
  EXPECT_EQ(Field(*a, "name", 0), "first");
  EXPECT_EQ(Field(*a, "ratio", 0), "0.5");
  EXPECT_EQ(Field(*a, "payload", 0), std::string("\x00\xff\x10", 3));
  EXPECT_EQ(Field(*a, "color", 0), "GREEN");
  EXPECT_EQ(Field(*a, "hash", 0), "abcd");
  EXPECT_EQ(Field(*a, "price", 0), "12.34");
  EXPECT_EQ(Field(*a, "price", 1), "-12.34");
  EXPECT_EQ(Field(*a, "price", 3), "99999999.99");
  EXPECT_EQ(Field(*a, "amount", 0), "12.3456");
  EXPECT_EQ(Field(*a, "amount", 1), "-0.0001");
  EXPECT_EQ(Field(*a, "amount", 3), "-12.3456");
  EXPECT_EQ(Field(*a, "day", 0), "2022-01-08");
  EXPECT_EQ(static_cast<const arrow::Time64Array&>(*a->GetFieldByName("t_ms")).Value(0), 3723004000);
  EXPECT_EQ(static_cast<const arrow::Time64Array&>(*a->GetFieldByName("t_us")).Value(0), 3723004005);
  EXPECT_EQ(static_cast<const arrow::TimestampArray&>(*a->GetFieldByName("ts_ms")).Value(0), 1700000000123000);
  EXPECT_EQ(static_cast<const arrow::TimestampArray&>(*a->GetFieldByName("ts_us")).Value(0), 1700000000123456);
  EXPECT_EQ(static_cast<const arrow::TimestampArray&>(*a->GetFieldByName("local_ts")).Value(3), 1000);
  EXPECT_EQ(Field(*a, "uid", 2), "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF");
  EXPECT_EQ(Field(*a, "note", 0), "hello");
  EXPECT_TRUE(a->GetFieldByName("note")->IsNull(1));
  EXPECT_EQ(Field(*a, "note", 2), "");
  EXPECT_EQ(Field(*a, "rank", 0), "-5");
  EXPECT_TRUE(a->GetFieldByName("rank")->IsNull(1));
  EXPECT_EQ(Field(*a, "address", 0), "{street:string = Main St, zip:int32 = 12345}");
  EXPECT_EQ(Field(*a, "address", 1), "{street:string = \xc3\xa9t\xc3\xa9 \xe2\x98\x83, zip:int32 = null}");
  EXPECT_EQ(Field(*a, "tags", 0), "list<element: string not null>[a, bb, ]");
  EXPECT_EQ(Field(*a, "attrs", 0),
            "map<string, double>[{key:string = k1, value:double = 1.5}, {key:string = k2, value:double = null}]");
  EXPECT_EQ(Field(*a, "choice", 0),
            "{tag:int32 = 0, field0:string = text, field1:int64 = null, field2:struct<street: "
            "string not null, zip: int32> = null}");
  EXPECT_TRUE(a->GetFieldByName("choice")->IsNull(1));
  EXPECT_EQ(Field(*a, "choice", 2),
            "{tag:int32 = 2, field0:string = null, field1:int64 = null, field2:struct<street: string not null, zip: "
            "int32> = {street:string = via choice, zip:int32 = 9}}");
  EXPECT_EQ(Field(*a, "choice", 3).substr(0, 60), "{tag:int32 = 1, field0:string = null, field1:int64 = -1, fie");
  EXPECT_EQ(Field(*a, "inner", 0), "{x:int32 = -1}");
  EXPECT_TRUE(a->GetFieldByName("inner")->IsNull(1));
}

// Hand-built per the Avro spec: int 1 is zigzag 0x02, string "foo" is
// length 3 (0x06) and the bytes.
TEST(AvroValue, DecodesHandBuiltBytesAndTheConfluentHeader) {
  auto s = MakeSchema(kSmall);
  ASSERT_NE(s, nullptr);
  auto a = DecodeAll(*s, {Bytes("0206666f6f"), Bytes("7f00")});
  EXPECT_EQ(Field(*a, "a", 0), "1");
  EXPECT_EQ(Field(*a, "b", 0), "foo");
  EXPECT_EQ(Field(*a, "a", 1), "-64");
  EXPECT_EQ(Field(*a, "b", 1), "");

  // Magic 0, schema id 300 (0x0000012c) big-endian, then the datum.
  auto b = s->MakeBuilder();
  std::optional<int32_t> id;
  ASSERT_TRUE(s->Decode(Bytes("000000012c 0206666f6f"), true, b->get(), &id).ok());
  EXPECT_EQ(id, 300);
  EXPECT_EQ(ConfluentSchemaId(Bytes("000000012c 02")), 300);
  EXPECT_EQ(ConfluentSchemaId(Bytes("000000012c")), 300);
  EXPECT_EQ(ConfluentSchemaId(Bytes("00000001")), std::nullopt);
  EXPECT_EQ(ConfluentSchemaId(Bytes("010000012c")), std::nullopt);
  std::shared_ptr<arrow::Array> framed;
  ASSERT_TRUE((*b)->Finish(&framed).ok());
  EXPECT_EQ(Hex(EncodeRow(*s, static_cast<const arrow::StructArray&>(*framed), 0, 300)), "000000012c0206666f6f");
  EXPECT_EQ(Hex(EncodeRow(*s, static_cast<const arrow::StructArray&>(*framed), 0, -2)), "00fffffffe0206666f6f");
}

TEST(AvroValue, BlocksWrittenDifferentlyDecodeButDoNotEncodeToTheSameBytes) {
  auto s = MakeSchema(R"({"type": "record", "name": "R", "fields": [
      {"name": "xs", "type": {"type": "array", "items": "int"}},
      {"name": "m", "type": {"type": "map", "values": "int"}}]})");
  ASSERT_NE(s, nullptr);
  // xs: a block of -2 items with its byte size 2 (1, 2), then a block of 1 (3), then 0;
  // m: {"a": 1} as one block.
  const std::string odd = Bytes("03 04 0204 02 06 00 02 0261 02 00");
  auto a = DecodeAll(*s, {odd});
  EXPECT_EQ(Field(*a, "xs", 0), "list<element: int32 not null>[1, 2, 3]");
  // One block of 3, as Java and fastavro write it.
  EXPECT_EQ(Hex(EncodeRow(*s, *a, 0)), NoSpace("06020406 00 02 0261 02 00"));
}

TEST(AvroValue, MalformedDatumsFailWithTheFieldAndBytePosition) {
  auto s = MakeSchema(R"({"type": "record", "name": "R", "fields": [
      {"name": "i", "type": "int"},
      {"name": "s", "type": ["null", "string"]},
      {"name": "r", "type": {"type": "record", "name": "In", "fields": [
        {"name": "flag", "type": "boolean"},
        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
        {"name": "xs", "type": {"type": "array", "items": "long"}}]}},
      {"name": "d", "type": {"type": "bytes", "logicalType": "decimal", "precision": 3, "scale": 1}},
      {"name": "t", "type": {"type": "int", "logicalType": "time-millis"}}]})");
  ASSERT_NE(s, nullptr);
  // i=1, s="ab", flag=true, e=B, xs=[], d=12.3 (0x7b), t=5
  EXPECT_EQ(DecodeError(*s, "02 02046162 01 02 00 027b 0a"), "ok");
  EXPECT_EQ(DecodeError(*s, ""), "Avro value: field 'i': unexpected end of data at byte 0");
  EXPECT_EQ(DecodeError(*s, "02 04"), "Avro value: field 's': union branch 2 out of range (union has 2) at byte 1");
  EXPECT_EQ(
      DecodeError(*s, "02 02 0a6162"),
      "Avro value: field 's': string length 5 at byte 2 exceeds the 2 bytes remaining (file truncated or corrupt)");
  EXPECT_EQ(DecodeError(*s, "02 02 03"), "Avro value: field 's': negative string length -2 at byte 2");
  EXPECT_EQ(DecodeError(*s, "02 02 02ff"), "Avro value: field 's': string at byte 2 is not valid UTF-8");
  EXPECT_EQ(DecodeError(*s, "02 00 02"), "Avro value: field 'r.flag': invalid boolean byte 2 at byte 2");
  EXPECT_EQ(DecodeError(*s, "02 00 01 04"),
            "Avro value: field 'r.e': enum index 2 out of range for 'E' (2 symbols) at byte 3");
  // A count of 2^31 items with 0 bytes behind it: refused before any allocation.
  EXPECT_EQ(DecodeError(*s, "02 00 01 02 8080808010"),
            "Avro value: field 'r.xs': array block count 2147483648 at byte 4 exceeds the 0 bytes remaining");
  EXPECT_EQ(DecodeError(*s, "02 00 01 02 ffffffffffffffffff7f"),
            "Avro value: field 'r.xs': varint overflows 64 bits at byte 13");
  EXPECT_EQ(DecodeError(*s, "02 00 01 02 00 00"), "Avro value: field 'd': decimal at byte 5 has no bytes");
  EXPECT_EQ(DecodeError(*s, "02 00 01 02 00 0403e8 00"),
            "Avro value: field 'd': decimal 1000 at byte 5 has more than the schema's 3 digits");
  EXPECT_EQ(DecodeError(*s, "02 00 01 02 00 027b 80f0b252"),
            "Avro value: field 't': time-millis value 86400000 at byte 7 is not a time of day");
  EXPECT_EQ(DecodeError(*s, "02 00 01 02 00 027b 0a 00"), "Avro value: 1 bytes after the end of the datum at byte 8");
  EXPECT_EQ(DecodeError(*s, "8080808010"), "Avro value: field 'i': int value 2147483648 out of range at byte 0");
  // Framing.
  EXPECT_EQ(DecodeError(*s, "0000", true), "Avro value: the Confluent header needs 5 bytes, the value has 2");
  EXPECT_EQ(DecodeError(*s, "0100000001 02", true),
            "Avro value: magic byte 1 at byte 0 is not the Confluent header's 0 (is the value framed?)");
  // Positions count the header's 5 bytes.
  EXPECT_EQ(DecodeError(*s, "0000000001 02 04", true),
            "Avro value: field 's': union branch 2 out of range (union has 2) at byte 6");
}

TEST(AvroValue, EncodingRowsTheSchemaCannotWriteFails) {
  auto s = MakeSchema(R"({"type": "record", "name": "R", "fields": [
      {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
      {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
      {"name": "f", "type": {"type": "fixed", "name": "F", "size": 2, "logicalType": "decimal", "precision": 4,
                             "scale": 0}}]})");
  ASSERT_NE(s, nullptr);
  auto a = arrow::json::ArrayFromJSONString(s->arrow_type(), R"([
      {"e": "B", "ts": 5000, "f": "-129"}, {"e": "C", "ts": 5000, "f": "1"}, {"e": "A", "ts": 5001, "f": "1"},
      {"e": "A", "ts": 0, "f": "9999"}, {"e": null, "ts": 0, "f": "1"}, null])");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  const auto& sa = static_cast<const arrow::StructArray&>(**a);
  EXPECT_EQ(Hex(EncodeRow(*s, sa, 0)), NoSpace("02 0a ff7f"));
  EXPECT_EQ(EncodeRow(*s, sa, 1), "error: Avro encode: field 'e': 'C' is not a symbol of enum 'E'");
  EXPECT_EQ(EncodeRow(*s, sa, 2),
            "error: Avro encode: field 'ts': 5001 microseconds is not a whole number of milliseconds "
            "(timestamp-millis)");
  EXPECT_EQ(Hex(EncodeRow(*s, sa, 3)), NoSpace("00 00 270f"));
  EXPECT_EQ(EncodeRow(*s, sa, 4), "error: Avro encode: field 'e': null where the Avro schema has no null");
  EXPECT_EQ(EncodeRow(*s, sa, 5), "error: Avro encode: the value struct is null in row 5");
  // A failed encode leaves *out as it was.
  std::string out = "keep";
  EXPECT_FALSE(s->Encode(sa, 1, 7, &out).ok());
  EXPECT_EQ(out, "keep");

  auto narrow = MakeSchema(R"({"type": "record", "name": "R", "fields": [{"name": "f", "type": {"type": "fixed",
      "name": "F", "size": 1, "logicalType": "decimal", "precision": 4, "scale": 0}}]})");
  auto b = arrow::json::ArrayFromJSONString(narrow->arrow_type(), R"([{"f": "127"}, {"f": "-128"}, {"f": "128"}])");
  ASSERT_TRUE(b.ok());
  const auto& sb = static_cast<const arrow::StructArray&>(**b);
  EXPECT_EQ(Hex(EncodeRow(*narrow, sb, 0)), "7f");
  EXPECT_EQ(Hex(EncodeRow(*narrow, sb, 1)), "80");
  EXPECT_EQ(EncodeRow(*narrow, sb, 2), "error: Avro encode: field 'f': decimal 128 does not fit fixed[1]");
}

TEST(AvroValue, ShortestDecimalBytesAsJavaWritesThem) {
  auto s = MakeSchema(R"({"type": "record", "name": "R", "fields": [{"name": "d", "type": {"type": "bytes",
      "logicalType": "decimal", "precision": 38, "scale": 0}}]})");
  ASSERT_NE(s, nullptr);
  // BigInteger.toByteArray: 0 -> 00, 127 -> 7f, 128 -> 0080, -1 -> ff, -128 -> 80, -129 -> ff7f.
  for (const char* hex : {"0200", "027f", "040080", "02ff", "0280", "04ff7f", "20 4b3b4ca85a86c47a098a223fffffffff"}) {
    auto a = DecodeAll(*s, {Bytes(hex)});
    EXPECT_EQ(Hex(EncodeRow(*s, *a, 0)), NoSpace(hex));
  }
  // Longer than needed (sign padding): decodes, encodes shorter.
  auto a = DecodeAll(*s, {Bytes("06000080")});
  EXPECT_EQ(Field(*a, "d", 0), "128");
  EXPECT_EQ(Hex(EncodeRow(*s, *a, 0)), "040080");
}

// Schema evolution (archive --value-format registry): v1 and v2 of a
// schema resolved against the table's struct by name.
TEST(AvroValue, WriterSchemasResolveAgainstAnEvolvedTableByName) {
  const std::string v1 = R"({"type": "record", "name": "R", "fields": [
      {"name": "id", "type": "long"},
      {"name": "c", "type": {"type": "record", "name": "C", "fields": [{"name": "n", "type": "string"}]}}]})";
  const std::string v2 = R"({"type": "record", "name": "R", "fields": [
      {"name": "id", "type": "long"},
      {"name": "c", "type": {"type": "record", "name": "C", "fields": [{"name": "n", "type": "string"},
          {"name": "e", "type": ["null", "string"], "default": null}]}},
      {"name": "note", "type": ["null", "string"], "default": null}]})";
  auto table_v1 = MakeSchema(v1);
  ASSERT_NE(table_v1, nullptr);
  // v2 has fields the table lacks: NotFound naming the first; Evolve adds them with new ids.
  auto missing = AvroValueSchema::Resolve(v2, table_v1->iceberg_type());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "field 'c.e' of the writer schema is not in the table");
  int32_t next = table_v1->last_field_id() + 1;
  auto evolved = AvroValueSchema::Evolve(table_v1->iceberg_type(), v2, &next);
  ASSERT_TRUE(evolved.ok()) << evolved.status().ToString();
  EXPECT_EQ((*evolved)->ToString(), "struct<id: long, c: struct<n: string, e: string>, note: string>");
  EXPECT_EQ((*evolved)->fields[0].id, 100);
  EXPECT_EQ((*evolved)->fields[1].type->fields[1].id, 103);
  EXPECT_EQ((*evolved)->fields[2].id, 104);
  EXPECT_FALSE((*evolved)->fields[2].required);
  EXPECT_EQ(next, 105);

  auto r1 = AvroValueSchema::Resolve(v1, *evolved);
  auto r2 = AvroValueSchema::Resolve(v2, *evolved);
  ASSERT_TRUE(r1.ok() && r2.ok()) << r1.status().ToString() << r2.status().ToString();
  // v1 datum {id: 5, c: {n: "a"}}; v2 datum {id: -1, c: {n: "b", e: "x"}, note: null}.
  const std::string d1 = Bytes("0a 02 61"), d2 = Bytes("01 02 62 02 02 78 00");
  auto b = (*r1)->MakeBuilder();
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE((*r1)->Decode(d1, false, b->get()).ok());
  ASSERT_TRUE((*r2)->Decode(d2, false, b->get()).ok());
  std::shared_ptr<arrow::Array> out;
  ASSERT_TRUE((*b)->Finish(&out).ok());
  ASSERT_TRUE(out->ValidateFull().ok());
  EXPECT_EQ(out->ToString(), arrow::json::ArrayFromJSONString(out->type(), R"([
      {"id": 5, "c": {"n": "a", "e": null}, "note": null},
      {"id": -1, "c": {"n": "b", "e": "x"}, "note": null}])").ValueOrDie()->ToString());
  const auto& sa = static_cast<const arrow::StructArray&>(*out);
  EXPECT_EQ(EncodeRow(**r1, sa, 0), d1);
  EXPECT_EQ(EncodeRow(**r2, sa, 1), d2);
  // A struct array of an older file (without the evolved fields) encodes by name too.
  auto old = DecodeAll(*table_v1, {d1});
  EXPECT_EQ(EncodeRow(**r1, *old, 0), d1);
  EXPECT_EQ(EncodeRow(**r2, *old, 0), Bytes("0a 02 61 00 00"));

  // A field of another type, and an optional writer field where the table's is required.
  EXPECT_EQ(AvroValueSchema::Resolve(R"({"type": "record", "name": "R", "fields": [{"name": "id", "type": "string"}]})",
                                     *evolved).status().message(),
            "field 'id' is long in the table but string in the writer schema");
  EXPECT_EQ(AvroValueSchema::Resolve(R"({"type": "record", "name": "R", "fields": [
                                       {"name": "id", "type": ["null", "long"]}]})", *evolved).status().message(),
            "field 'id' is required in the table but optional in the writer schema");
  EXPECT_EQ(AvroValueSchema::Resolve(R"({"type": "record", "name": "R", "fields": [{"name": "note", "type": "string"}]})",
                                     *evolved).status().message(),
            "field 'id' is required in the table but the writer schema lacks it");
}

TEST(AvroValue, ALaterSchemaWidensIntAndFloatColumnsAndOlderSchemasStillEncode) {
  const std::string v1 = R"({"type": "record", "name": "R", "fields": [
      {"name": "n", "type": "int"}, {"name": "f", "type": "float"},
      {"name": "d", "type": {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2}}]})";
  const std::string v2 = R"({"type": "record", "name": "R", "fields": [
      {"name": "n", "type": "long"}, {"name": "f", "type": "double"},
      {"name": "d", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2}}]})";
  auto table_v1 = MakeSchema(v1);
  ASSERT_TRUE(table_v1);
  // v2 widens all three: NotFound (evolve), not a refusal.
  auto wider = AvroValueSchema::Resolve(v2, table_v1->iceberg_type());
  ASSERT_FALSE(wider.ok());
  EXPECT_EQ(wider.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(wider.status().message(),
            "field 'n' is int in the table but long in the writer schema (the table can widen to it)");
  int32_t next = 200;
  auto evolved = AvroValueSchema::Evolve(table_v1->iceberg_type(), v2, &next);
  ASSERT_TRUE(evolved.ok()) << evolved.status().ToString();
  EXPECT_EQ((*evolved)->ToString(), "struct<n: long, f: double, d: decimal(12,2)>");
  EXPECT_EQ((*evolved)->fields[0].id, table_v1->iceberg_type()->fields[0].id) << "a widened field keeps its id";
  EXPECT_EQ(next, 200) << "nothing added";
  // A narrower writer against the wider table, never the reverse.
  auto narrowing = AvroValueSchema::Resolve(v1, *evolved);
  ASSERT_TRUE(narrowing.ok()) << narrowing.status().ToString();
  auto r1 = *narrowing;
  auto r2 = AvroValueSchema::Resolve(v2, *evolved).ValueOrDie();
  // v1 {n: -3, f: 0.5, d: 1.23}, v2 {n: 2^40, f: 0.1, d: 1234567.89}: decoded into the long, double and decimal(12, 2) columns.
  const std::string d1 = Bytes("05 0000003f 02 7b");
  const std::string d2 = Bytes("8080808080 40 9a9999999999b93f 08 075bcd15");
  auto b = r1->MakeBuilder();
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE(r1->Decode(d1, false, b->get()).ok());
  ASSERT_TRUE(r2->Decode(d2, false, b->get()).ok());
  std::shared_ptr<arrow::Array> out;
  ASSERT_TRUE((*b)->Finish(&out).ok());
  ASSERT_TRUE(out->ValidateFull().ok());
  const auto& a = static_cast<const arrow::StructArray&>(*out);
  EXPECT_EQ(a.field(0)->type()->id(), arrow::Type::INT64);
  EXPECT_EQ(Field(a, "n", 0), "-3");
  EXPECT_EQ(Field(a, "f", 0), "0.5");
  EXPECT_EQ(Field(a, "n", 1), "1099511627776");
  // Each row encodes back with its own writer schema, byte for byte.
  EXPECT_EQ(Hex(EncodeRow(*r1, a, 0)), Hex(d1));
  EXPECT_EQ(Hex(EncodeRow(*r2, a, 1)), Hex(d2));
  // v2's long does not fit v1's int; 0.1 as a double is not a float.
  EXPECT_EQ(EncodeRow(*r1, a, 1), "error: Avro encode: field 'n': 1099511627776 does not fit the Avro schema's int");
  // A file written before the table widened holds int32 and float columns: both schemas still encode them.
  auto old = DecodeAll(*table_v1, {d1});
  EXPECT_EQ(Hex(EncodeRow(*r1, *old, 0)), Hex(d1));
  EXPECT_EQ(Hex(EncodeRow(*r2, *old, 0)), Hex(Bytes("05 000000000000e03f 02 7b")));
}

}  // namespace
}  // namespace thaw::records

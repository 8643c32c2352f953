// Tests for the Avro OCF reader/writer (src/thaw/iceberg/avro/avro.h).
//
// Hand-built files below use this file's own tiny encoder (not the one under
// test) so that reader bugs cannot be masked by matching writer bugs.

#include "thaw/iceberg/avro/avro.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <zstd.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace thaw::avro {
namespace {

namespace fs = std::filesystem;

// --- independent encoding helpers -------------------------------------------

std::string Varint(int64_t v) {
  uint64_t z = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  std::string out;
  do {
    uint8_t b = z & 0x7f;
    z >>= 7;
    if (z) b |= 0x80;
    out.push_back(static_cast<char>(b));
  } while (z);
  return out;
}

int64_t ReadVarint(const std::string& s, size_t* pos) {
  uint64_t acc = 0;
  for (int shift = 0; *pos < s.size(); shift += 7) {
    uint8_t b = static_cast<uint8_t>(s[(*pos)++]);
    acc |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) break;
  }
  return static_cast<int64_t>(acc >> 1) ^ -static_cast<int64_t>(acc & 1);
}

std::string AvroBytes(std::string_view s) {
  return Varint(static_cast<int64_t>(s.size())) + std::string(s);
}

const std::string kSync = "0123456789abcdef";

std::string Header(const std::string& schema_json, const std::string& codec = "null",
                   const std::string& sync = kSync) {
  std::string out("Obj\x01", 4);
  int n = codec.empty() ? 1 : 2;
  out += Varint(n);
  out += AvroBytes("avro.schema") + AvroBytes(schema_json);
  if (!codec.empty()) out += AvroBytes("avro.codec") + AvroBytes(codec);
  out += Varint(0);
  out += sync;
  return out;
}

std::string Block(int64_t count, const std::string& data, const std::string& sync = kSync) {
  return Varint(count) + AvroBytes(data) + sync;
}

// A writer-produced file with exactly one block, taken apart so tests can
// rebuild it with a modified payload.
struct OneBlock {
  std::string header, sync;
  int64_t count = 0;
  std::string payload;
  std::string With(const std::string& new_payload) const {
    return header + Varint(count) + AvroBytes(new_payload) + sync;
  }
};

OneBlock SplitOneBlock(const std::string& file) {
  OneBlock b;
  b.sync = file.substr(file.size() - 16);
  size_t pos = file.find(b.sync) + 16;
  b.header = file.substr(0, pos);
  b.count = ReadVarint(file, &pos);
  int64_t size = ReadVarint(file, &pos);
  b.payload = file.substr(pos, static_cast<size_t>(size));
  EXPECT_EQ(pos + static_cast<size_t>(size) + 16, file.size()) << "more than one block";
  return b;
}

// Opens and reads everything; returns the error message ("" on success).
std::string ReadError(std::string data, const std::string& source = "test.avro") {
  auto reader = OcfReader::Open(std::move(data), source);
  if (!reader.ok()) return reader.status().message();
  auto values = (*reader)->ReadAll();
  if (!values.ok()) return values.status().message();
  return "";
}

Result<std::vector<Value>> ReadValues(std::string data) {
  ASSIGN_OR_RAISE(auto reader, OcfReader::Open(std::move(data), "test.avro"));
  return reader->ReadAll();
}

// --- value comparison ---------------------------------------------------------

void ExpectSame(const Value& want, const Value& got, const std::string& path) {
  ASSERT_EQ(want.type, got.type) << path;
  switch (want.type) {
    case Type::kBoolean:
      EXPECT_EQ(want.boolean, got.boolean) << path;
      break;
    case Type::kInt:
    case Type::kLong:
    case Type::kEnum:
      EXPECT_EQ(want.integer, got.integer) << path;
      break;
    case Type::kFloat:
      EXPECT_EQ(std::bit_cast<uint32_t>(static_cast<float>(want.real)),
                std::bit_cast<uint32_t>(static_cast<float>(got.real)))
          << path;
      break;
    case Type::kDouble:
      EXPECT_EQ(std::bit_cast<uint64_t>(want.real), std::bit_cast<uint64_t>(got.real)) << path;
      break;
    case Type::kBytes:
    case Type::kString:
    case Type::kFixed:
      EXPECT_EQ(want.bytes, got.bytes) << path;
      break;
    default:
      break;
  }
  EXPECT_EQ(want.keys, got.keys) << path;
  ASSERT_EQ(want.items.size(), got.items.size()) << path;
  for (size_t i = 0; i < want.items.size(); ++i) {
    ExpectSame(want.items[i], got.items[i], path + "/" + std::to_string(i));
  }
}

// --- a schema that uses every type ---------------------------------------------

const char* kAllTypesSchema = R"({
  "type": "record", "name": "row", "namespace": "thaw.test", "doc": "all types",
  "fields": [
    {"name": "n", "type": "null", "field-id": 1},
    {"name": "b", "type": "boolean", "field-id": 2},
    {"name": "i", "type": "int", "field-id": 3},
    {"name": "l", "type": "long", "field-id": 4},
    {"name": "f", "type": "float", "field-id": 5},
    {"name": "d", "type": "double", "field-id": 6},
    {"name": "by", "type": "bytes", "field-id": 7},
    {"name": "s", "type": "string", "field-id": 8},
    {"name": "fx", "type": {"type": "fixed", "name": "uuid16", "size": 16, "logicalType": "uuid"},
     "field-id": 9},
    {"name": "e", "type": {"type": "enum", "name": "color", "symbols": ["RED", "GREEN", "BLUE"]},
     "field-id": 10},
    {"name": "arr", "type": {"type": "array", "items": "long", "element-id": 12}, "field-id": 11},
    {"name": "m", "type": {"type": "map", "values": ["null", "string"], "key-id": 14,
                           "value-id": 15}, "field-id": 13},
    {"name": "opt_s", "type": ["null", "string"], "default": null, "field-id": 16},
    {"name": "opt_rec", "type": ["null", {"type": "record", "name": "inner", "fields": [
        {"name": "x", "type": "int", "field-id": 18},
        {"name": "tags", "type": {"type": "array", "items": "string", "element-id": 20},
         "field-id": 19}]}], "default": null, "field-id": 17},
    {"name": "inner_again", "type": ["null", "inner"], "field-id": 21},
    {"name": "kv", "type": {"type": "array", "logicalType": "map", "items": {
        "type": "record", "name": "k23_v24", "fields": [
          {"name": "key", "type": "int", "field-id": 23},
          {"name": "value", "type": "bytes", "field-id": 24}]}}, "field-id": 22},
    {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros",
                            "adjust-to-utc": true}, "field-id": 25},
    {"name": "dec", "type": {"type": "fixed", "name": "dec9_2", "size": 4,
                             "logicalType": "decimal", "precision": 9, "scale": 2},
     "field-id": 26},
    {"name": "color2", "type": ["null", "color"], "field-id": 27}
  ]})";

Value MakeRow(int i) {
  const int64_t longs[] = {0,
                           1,
                           -1,
                           std::numeric_limits<int64_t>::max(),
                           std::numeric_limits<int64_t>::min(),
                           1234567890123LL};
  std::vector<Value> arr;
  for (int k = 0; k < i % 4; ++k) arr.push_back(Value::Long(longs[(i + k) % 6]));
  std::vector<std::string> keys;
  std::vector<Value> vals;
  for (int k = 0; k < i % 3; ++k) {
    keys.push_back("key-" + std::to_string(k));
    vals.push_back(k == 1 ? Value::Null() : Value::String(std::string(k * 20, 'v')));
  }
  Value inner = Value::Record(
      {Value::Int(-i), Value::Array({Value::String("t" + std::to_string(i)), Value::String("")})});
  std::vector<Value> kv;
  for (int k = 0; k < 3; ++k) {
    kv.push_back(Value::Record({Value::Int(k + 1), Value::Bytes(std::string(k, '\0') + "x")}));
  }
  std::string fixed16(16, '\0');
  for (int k = 0; k < 16; ++k) fixed16[k] = static_cast<char>(i * 7 + k);
  return Value::Record({
      Value::Null(),
      Value::Boolean(i % 2 == 0),
      Value::Int(i % 5 == 0 ? std::numeric_limits<int32_t>::min() : i * 1000),
      Value::Long(longs[i % 6]),
      Value::Float(i == 3 ? std::nanf("") : 1.5f * static_cast<float>(i)),
      Value::Double(i == 4 ? -std::numeric_limits<double>::infinity() : -0.25 * i),
      Value::Bytes(std::string("\0\xff\x01", 3) + std::string(i % 50, 'b')),
      Value::String(i % 7 == 0 ? "" : "string value number " + std::to_string(i)),
      Value::Fixed(fixed16),
      Value::Enum(i % 3),
      Value::Array(std::move(arr)),
      Value::Map(std::move(keys), std::move(vals)),
      i % 2 ? Value::String("opt " + std::to_string(i)) : Value::Null(),
      i % 3 ? inner : Value::Null(),
      i % 3 == 1 ? inner : Value::Null(),
      Value::Array(std::move(kv)),
      Value::Long(1700000000000000LL + i),
      Value::Fixed(std::string("\x00\x00\x30\x39", 4)),
      i % 2 ? Value::Enum(2) : Value::Null(),
  });
}

// --- schema parsing --------------------------------------------------------------

TEST(AvroSchema, ParsesAllTypesIdsAndAttributes) {
  auto parsed = ParseSchema(kAllTypesSchema);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  const Schema& s = **parsed;
  EXPECT_EQ(s.type, Type::kRecord);
  EXPECT_EQ(s.name, "thaw.test.row");
  ASSERT_EQ(s.fields.size(), 19u);
  EXPECT_EQ(s.FieldIndex("s"), 7);
  EXPECT_EQ(s.FieldIndexById(8), 7);
  EXPECT_EQ(s.FieldIndex("nope"), -1);
  EXPECT_EQ(s.FieldIndexById(999), -1);
  for (size_t i = 0; i < s.fields.size(); ++i) ASSERT_TRUE(s.fields[i].field_id.has_value());

  const Schema& fx = *s.fields[8].schema;
  EXPECT_EQ(fx.type, Type::kFixed);
  EXPECT_EQ(fx.name, "thaw.test.uuid16");
  EXPECT_EQ(fx.fixed_size, 16);
  EXPECT_EQ(fx.logical_type, "uuid");

  const Schema& e = *s.fields[9].schema;
  EXPECT_EQ(e.type, Type::kEnum);
  EXPECT_EQ(e.symbols, (std::vector<std::string>{"RED", "GREEN", "BLUE"}));

  const Schema& arr = *s.fields[10].schema;
  EXPECT_EQ(arr.type, Type::kArray);
  EXPECT_EQ(arr.element_id, 12);
  EXPECT_EQ(arr.items->type, Type::kLong);

  const Schema& m = *s.fields[11].schema;
  EXPECT_EQ(m.type, Type::kMap);
  EXPECT_EQ(m.key_id, 14);
  EXPECT_EQ(m.value_id, 15);
  ASSERT_EQ(m.values->type, Type::kUnion);
  EXPECT_EQ(m.values->branches[0]->type, Type::kNull);

  // A named type referenced by its short name within the same namespace.
  const Schema& opt_rec = *s.fields[13].schema;
  const Schema& again = *s.fields[14].schema;
  ASSERT_EQ(opt_rec.type, Type::kUnion);
  ASSERT_EQ(again.type, Type::kUnion);
  EXPECT_EQ(opt_rec.branches[1].get(), again.branches[1].get());
  EXPECT_EQ(again.branches[1]->name, "thaw.test.inner");
  EXPECT_EQ(again.branches[1]->fields[1].schema->element_id, 20);

  // Iceberg's map-as-array: ids of the key/value record surface on the array.
  const Schema& kv = *s.fields[15].schema;
  EXPECT_EQ(kv.type, Type::kArray);
  EXPECT_EQ(kv.logical_type, "map");
  EXPECT_EQ(kv.key_id, 23);
  EXPECT_EQ(kv.value_id, 24);
  EXPECT_EQ(kv.items->fields[0].field_id, 23);

  const Schema& ts = *s.fields[16].schema;
  EXPECT_EQ(ts.type, Type::kLong);
  EXPECT_EQ(ts.logical_type, "timestamp-micros");
  EXPECT_EQ(ts.attributes.at("adjust-to-utc"), "true");

  const Schema& dec = *s.fields[17].schema;
  EXPECT_EQ(dec.logical_type, "decimal");
  EXPECT_EQ(dec.attributes.at("precision"), "9");
  EXPECT_EQ(dec.attributes.at("scale"), "2");
  EXPECT_EQ(s.attributes.at("doc"), "\"all types\"");
}

TEST(AvroSchema, JsonRoundTripKeepsIdsAndAttributes) {
  auto first = ParseSchema(kAllTypesSchema);
  ASSERT_TRUE(first.ok()) << first.status().message();
  std::string json1 = SchemaToJson(**first);
  auto second = ParseSchema(json1);
  ASSERT_TRUE(second.ok()) << second.status().message() << "\n" << json1;
  EXPECT_EQ(SchemaToJson(**second), json1);
  const Schema& s = **second;
  EXPECT_EQ(s.fields[15].schema->key_id, 23);
  EXPECT_EQ(s.fields[11].schema->value_id, 15);
  EXPECT_EQ(s.fields[10].schema->element_id, 12);
  EXPECT_EQ(s.fields[16].schema->attributes.at("adjust-to-utc"), "true");
  EXPECT_EQ(s.fields[26 - 9].schema->attributes.at("precision"), "9");
  // Named types are defined once and referenced afterwards.
  auto j = nlohmann::json::parse(json1);
  EXPECT_EQ(j["fields"][14]["type"][1], "thaw.test.inner");
  EXPECT_EQ(j["fields"][12]["default"], nullptr);
  EXPECT_EQ(j["fields"][12]["field-id"], 16);
}

TEST(AvroSchema, PrimitiveAndNamedForms) {
  auto p = ParseSchema(R"("string")");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ((*p)->type, Type::kString);
  EXPECT_EQ(SchemaToJson(**p), R"("string")");
  auto u = ParseSchema(R"(["null", {"type": "int", "logicalType": "date"}])");
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_EQ((*u)->branches[1]->logical_type, "date");
  // Dotted names carry their own namespace; "error" is a record.
  auto d = ParseSchema(R"({"type": "error", "name": "a.b.E", "namespace": "ignored",
                           "fields": [{"name": "self", "type": ["null", "string"]},
                                      {"name": "f", "type": {"type": "fixed", "name": "F",
                                                             "size": 2}},
                                      {"name": "g", "type": "a.b.F"}]})");
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ((*d)->name, "a.b.E");
  EXPECT_EQ((*d)->fields[1].schema->name, "a.b.F");
  EXPECT_EQ((*d)->fields[2].schema.get(), (*d)->fields[1].schema.get());
  EXPECT_FALSE((*d)->fields[0].field_id.has_value());
}

TEST(AvroSchema, RejectsBadSchemasWithClearErrors) {
  struct Case {
    const char* json;
    const char* message;
  } cases[] = {
      {R"({"type": "record", "name": "r", "fields": [)", "invalid Avro schema JSON"},
      {R"("nosuch")", "unknown type 'nosuch'"},
      {R"({"type": "record", "name": "r"})", "has no \"fields\" array"},
      {R"({"type": "record", "name": "r", "fields": [{"name": "a", "type": "blah"}]})",
       "at $.a: unknown type 'blah'"},
      {R"({"type": "record", "name": "node", "fields": [{"name": "next",
          "type": ["null", "node"]}]})",
       "recursive type 'node'"},
      {R"(["null", ["int"]])", "union cannot contain a union"},
      {R"(["int", "int"])", "duplicate int branch"},
      {R"([])", "empty union"},
      {R"({"type": "record", "name": "r", "fields": [
           {"name": "a", "type": {"type": "fixed", "name": "x", "size": 1}},
           {"name": "b", "type": {"type": "fixed", "name": "x", "size": 1}}]})",
       "type 'x' defined twice"},
      {R"({"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"},
          {"name": "a", "type": "int"}]})",
       "duplicate field 'a'"},
      {R"({"type": "record", "name": "r", "fields": [{"name": "a", "type": "int",
          "field-id": "7"}]})",
       "\"field-id\" must be an integer"},
      {R"({"type": "record", "name": "r", "fields": [{"name": "a", "type": "int",
          "field-id": 4294967296}]})",
       "out of range"},
      {R"({"type": "fixed", "name": "f", "size": -1})", "invalid size -1"},
      {R"({"type": "enum", "name": "e", "symbols": ["A", "A"]})", "duplicate enum symbol 'A'"},
      {R"({"type": "array"})", "array has no \"items\""},
      {R"({"type": "map", "values": "int", "key-id": 1.5})", "\"key-id\" must be an integer"},
      {R"(42)", "expected a type, got number"},
      {R"({"type": {"type": "int"}})", "\"type\" of a schema object must be a string"},
      {R"("int" trailing)", "invalid Avro schema JSON"},
      {"", "invalid Avro schema JSON"},
  };
  for (const Case& c : cases) {
    auto r = ParseSchema(c.json);
    ASSERT_FALSE(r.ok()) << c.json;
    EXPECT_NE(r.status().message().find(c.message), std::string::npos)
        << c.json << "\n  got: " << r.status().message();
  }
}

TEST(AvroSchema, DepthIsBounded) {
  // 63 nested arrays parse; deeper nesting is refused without recursing
  // further, and huge JSON nesting neither crashes nor overflows the stack.
  auto nested = [](int depth) {
    std::string s;
    for (int i = 0; i < depth; ++i) s += R"({"type": "array", "items": )";
    s += R"("int")";
    for (int i = 0; i < depth; ++i) s += "}";
    return s;
  };
  EXPECT_TRUE(ParseSchema(nested(60)).ok());
  auto deep = ParseSchema(nested(200));
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.status().message().find("nested deeper than 64"), std::string::npos);
  std::string brackets(200000, '[');
  EXPECT_FALSE(ParseSchema(brackets).ok());
  EXPECT_FALSE(ParseSchema(std::string(100000, '[') + std::string(100000, ']')).ok());
}

// --- round trips -------------------------------------------------------------------

class AvroCodecTest : public ::testing::TestWithParam<Codec> {};

TEST_P(AvroCodecTest, RoundTripsEveryTypeAcrossBlocks) {
  auto schema = ParseSchema(kAllTypesSchema);
  ASSERT_TRUE(schema.ok()) << schema.status().message();
  std::map<std::string, std::string> meta = {{"schema", R"({"type":"struct"})"},
                                             {"format-version", "2"},
                                             {"content", "data"},
                                             {"binary-key", std::string("\0\x01\xff", 3)},
                                             {"empty", ""}};
  auto writer = OcfWriter::Make(*schema, meta, GetParam());
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  // Enough rows for several 64 KiB blocks.
  const int kRows = 3000;
  std::vector<Value> rows;
  for (int i = 0; i < kRows; ++i) {
    rows.push_back(MakeRow(i));
    ASSERT_TRUE((*writer)->Append(rows.back()).ok()) << i;
  }
  auto bytes = (*writer)->Finish();
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();

  auto reader = OcfReader::Open(*bytes, "roundtrip.avro");
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  OcfReader& r = **reader;
  EXPECT_EQ(r.codec(), GetParam());
  EXPECT_EQ(r.Meta("avro.codec"), std::string(CodecName(GetParam())));
  for (const auto& [k, v] : meta) EXPECT_EQ(r.Meta(k), v) << k;
  EXPECT_FALSE(r.Meta("missing").has_value());
  EXPECT_EQ(r.metadata().size(), meta.size() + 2);  // + avro.schema, avro.codec
  EXPECT_EQ(SchemaToJson(r.schema()), SchemaToJson(**schema));
  EXPECT_EQ(r.schema().fields[10].schema->element_id, 12);

  auto values = r.ReadAll();
  ASSERT_TRUE(values.ok()) << values.status().message();
  ASSERT_EQ(values->size(), rows.size());
  for (int i = 0; i < kRows; ++i) {
    ExpectSame(rows[i], (*values)[i], "row " + std::to_string(i));
    if (HasFatalFailure()) return;
  }
  // Lookups by name and field id, through unions and nested records.
  const Value& v1 = (*values)[1];
  ASSERT_NE(v1.Get("s"), nullptr);
  EXPECT_EQ(v1.Get("s")->bytes, "string value number 1");
  EXPECT_EQ(v1.GetById(8), v1.Get("s"));
  EXPECT_EQ(v1.Get("no_such_field"), nullptr);
  EXPECT_EQ(v1.GetById(12345), nullptr);
  const Value* opt = v1.GetById(17);
  ASSERT_NE(opt, nullptr);
  ASSERT_EQ(opt->type, Type::kRecord);
  EXPECT_EQ(opt->schema->name, "thaw.test.inner");
  EXPECT_EQ(opt->GetById(18)->integer, -1);
  EXPECT_EQ(opt->Get("tags")->schema->element_id, 20);
  EXPECT_TRUE((*values)[0].GetById(17)->is_null());
  EXPECT_EQ(v1.Get("color2")->integer, 2);
  EXPECT_EQ(v1.Get("color2")->schema->symbols[2], "BLUE");
  EXPECT_EQ(v1.Get("ts")->schema->logical_type, "timestamp-micros");
  EXPECT_EQ(v1.Get("kv")->items[2].GetById(24)->bytes, std::string("\0\0x", 3));
}

INSTANTIATE_TEST_SUITE_P(AllCodecs, AvroCodecTest,
                         ::testing::Values(Codec::kNull, Codec::kDeflate, Codec::kSnappy,
                                           Codec::kZstd),
                         [](const auto& info) { return std::string(CodecName(info.param)); });

TEST(AvroOcf, CodecNames) {
  for (Codec c : {Codec::kNull, Codec::kDeflate, Codec::kSnappy, Codec::kZstd}) {
    auto parsed = ParseCodec(CodecName(c));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, c);
  }
  EXPECT_EQ(CodecName(Codec::kZstd), "zstandard");
  auto bad = ParseCodec("xz");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kUnsupported);
}

TEST(AvroOcf, WriterIsDeterministicAndEmptyFilesWork) {
  auto schema = ParseSchema(R"({"type": "record", "name": "r", "fields": [
      {"name": "a", "type": "long", "field-id": 1}]})");
  ASSERT_TRUE(schema.ok());
  auto write = [&](int rows) {
    auto w = OcfWriter::Make(*schema, {{"k", "v"}}, Codec::kDeflate);
    EXPECT_TRUE(w.ok());
    for (int i = 0; i < rows; ++i) EXPECT_TRUE((*w)->Append(Value::Record({Value::Long(i)})).ok());
    return std::move(*(*w)->Finish());
  };
  EXPECT_EQ(write(10), write(10));
  auto empty = ReadValues(write(0));
  ASSERT_TRUE(empty.ok()) << empty.status().message();
  EXPECT_TRUE(empty->empty());

  auto w = OcfWriter::Make(*schema, {}, Codec::kNull);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Finish().ok());
  EXPECT_FALSE((*w)->Append(Value::Record({Value::Long(1)})).ok());
  EXPECT_FALSE((*w)->Finish().ok());
}

TEST(AvroOcf, NextStreamsAndStaysAtEnd) {
  auto schema = ParseSchema(R"(["null", "string"])");
  ASSERT_TRUE(schema.ok());
  auto w = OcfWriter::Make(*schema, {}, Codec::kNull);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Append(Value::String("a")).ok());
  ASSERT_TRUE((*w)->Append(Value::Null()).ok());
  auto bytes = (*w)->Finish();
  ASSERT_TRUE(bytes.ok());
  auto r = OcfReader::Open(*bytes, "x");
  ASSERT_TRUE(r.ok());
  Value v;
  ASSERT_TRUE(*(*r)->Next(&v));
  EXPECT_EQ(v.type, Type::kString);
  EXPECT_EQ(v.bytes, "a");
  ASSERT_TRUE(*(*r)->Next(&v));
  EXPECT_TRUE(v.is_null());  // only the type says null: storage is reused
  EXPECT_FALSE(*(*r)->Next(&v));
  EXPECT_FALSE(*(*r)->Next(&v));
}

TEST(AvroOcf, ValuesOutliveTheReader) {
  auto schema = ParseSchema(kAllTypesSchema);
  ASSERT_TRUE(schema.ok());
  auto w = OcfWriter::Make(*schema, {}, Codec::kSnappy);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Append(MakeRow(1)).ok());
  auto bytes = (*w)->Finish();
  ASSERT_TRUE(bytes.ok());
  Value nested;
  {
    auto values = ReadValues(std::move(*bytes));
    ASSERT_TRUE(values.ok());
    nested = std::move((*values)[0].items[13]);  // opt_rec, a record
  }
  ASSERT_EQ(nested.type, Type::kRecord);
  EXPECT_EQ(nested.Get("x")->integer, -1);
  EXPECT_EQ(nested.GetById(19)->items.size(), 2u);
}

TEST(AvroOcf, UnionBranchSelectionAndConversions) {
  auto schema = ParseSchema(R"({"type": "record", "name": "r", "fields": [
      {"name": "u", "type": ["null", "int", "string", "double"]},
      {"name": "l", "type": "long"},
      {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["X", "Y"]}},
      {"name": "f", "type": {"type": "fixed", "name": "F", "size": 2}}]})");
  ASSERT_TRUE(schema.ok());
  auto w = OcfWriter::Make(*schema, {}, Codec::kNull);
  ASSERT_TRUE(w.ok());
  // int into long, string symbol into enum, bytes into fixed, long into the
  // int branch, float into the double branch.
  ASSERT_TRUE((*w)->Append(Value::Record({Value::Long(5), Value::Int(7), Value::String("Y"),
                                          Value::Bytes("ab")}))
                  .ok());
  ASSERT_TRUE((*w)->Append(Value::Record({Value::String("s"), Value::Long(1), Value::Enum(0),
                                          Value::Fixed("cd")}))
                  .ok());
  ASSERT_TRUE((*w)->Append(Value::Record({Value::Float(0.5f), Value::Long(1), Value::Enum(0),
                                          Value::Fixed("cd")}))
                  .ok());
  // Mismatches are refused, name the field, and leave the file valid.
  Status bad = (*w)->Append(
      Value::Record({Value::Null(), Value::String("x"), Value::Enum(0), Value::Fixed("cd")}));
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("field 'l': expected long, got a string value"), std::string::npos)
      << bad.message();
  bad = (*w)->Append(
      Value::Record({Value::Boolean(true), Value::Long(1), Value::Enum(0), Value::Fixed("cd")}));
  EXPECT_NE(bad.message().find("no union branch accepts a boolean"), std::string::npos);
  bad = (*w)->Append(
      Value::Record({Value::Null(), Value::Long(1), Value::String("Z"), Value::Fixed("cd")}));
  EXPECT_NE(bad.message().find("'Z' is not a symbol"), std::string::npos);
  bad = (*w)->Append(
      Value::Record({Value::Null(), Value::Long(1), Value::Enum(0), Value::Fixed("abc")}));
  EXPECT_NE(bad.message().find("needs 2 bytes"), std::string::npos);
  bad = (*w)->Append(Value::Record(
      {Value::Long(int64_t{1} << 40), Value::Long(1), Value::Enum(0), Value::Fixed("cd")}));
  EXPECT_FALSE(bad.ok());  // does not fit the int branch
  EXPECT_FALSE((*w)->Append(Value::Record({Value::Null()})).ok());

  auto values = ReadValues(std::move(*(*w)->Finish()));
  ASSERT_TRUE(values.ok()) << values.status().message();
  ASSERT_EQ(values->size(), 3u);
  EXPECT_EQ((*values)[0].items[0].type, Type::kInt);
  EXPECT_EQ((*values)[0].items[0].integer, 5);
  EXPECT_EQ((*values)[0].items[1].type, Type::kLong);
  EXPECT_EQ((*values)[0].items[2].integer, 1);
  EXPECT_EQ((*values)[0].items[3].bytes, "ab");
  EXPECT_EQ((*values)[1].items[0].type, Type::kString);
  EXPECT_EQ((*values)[2].items[0].type, Type::kDouble);
  EXPECT_EQ((*values)[2].items[0].real, 0.5);
}

TEST(AvroOcf, DecodesManyManifestLikeEntriesQuickly) {
  auto schema = ParseSchema(R"({"type": "record", "name": "manifest_entry", "fields": [
    {"name": "status", "type": "int", "field-id": 0},
    {"name": "snapshot_id", "type": ["null", "long"], "field-id": 1},
    {"name": "data_file", "type": {"type": "record", "name": "r2", "fields": [
      {"name": "file_path", "type": "string", "field-id": 100},
      {"name": "record_count", "type": "long", "field-id": 103},
      {"name": "lower_bounds", "type": ["null", {"type": "array", "logicalType": "map",
        "items": {"type": "record", "name": "k126_v127", "fields": [
          {"name": "key", "type": "int", "field-id": 126},
          {"name": "value", "type": "bytes", "field-id": 127}]}}], "field-id": 125}]},
     "field-id": 2}]})");
  ASSERT_TRUE(schema.ok()) << schema.status().message();
  auto w = OcfWriter::Make(*schema, {}, Codec::kDeflate);
  ASSERT_TRUE(w.ok());
  const int kEntries = 10000;
  for (int i = 0; i < kEntries; ++i) {
    std::vector<Value> bounds;
    for (int c = 1; c <= 10; ++c) {
      bounds.push_back(Value::Record({Value::Int(c), Value::Bytes(std::string(8, 'a' + c))}));
    }
    Value df = Value::Record(
        {Value::String("s3://bucket/warehouse/db/t/data/part-" + std::to_string(i) + ".parquet"),
         Value::Long(i), Value::Array(std::move(bounds))});
    ASSERT_TRUE((*w)->Append(Value::Record({Value::Int(1), Value::Long(42), std::move(df)})).ok());
  }
  auto bytes = (*w)->Finish();
  ASSERT_TRUE(bytes.ok());
  auto start = std::chrono::steady_clock::now();
  auto values = ReadValues(std::move(*bytes));
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(values.ok()) << values.status().message();
  ASSERT_EQ(values->size(), static_cast<size_t>(kEntries));
  int64_t sum = 0;
  for (const Value& v : *values) sum += v.GetById(2)->GetById(103)->integer;
  EXPECT_EQ(sum, int64_t{kEntries} * (kEntries - 1) / 2);
  EXPECT_EQ((*values)[9999].GetById(2)->GetById(125)->items[9].GetById(126)->integer, 10);
  RecordProperty("decode_ms", std::to_string(ms));
  EXPECT_LT(ms, 5000) << "decoding 10,000 entries took " << ms << " ms";
}

// --- hand-built files and corruption ----------------------------------------------

TEST(AvroOcfErrors, ReadsHandBuiltFileWithNegativeBlockCounts) {
  // array<long> written as one negative-count block (count -3 + byte size),
  // then a positive block, then the terminator; a map in the same style.
  std::string items = Varint(10) + Varint(-20) + Varint(30);
  std::string arr = Varint(-3) + Varint(static_cast<int64_t>(items.size())) + items + Varint(1) +
                    Varint(40) + Varint(0);
  std::string entries = AvroBytes("k") + Varint(7);
  std::string map = Varint(-1) + Varint(static_cast<int64_t>(entries.size())) + entries + Varint(0);
  std::string file = Header(R"({"type": "record", "name": "r", "fields": [
          {"name": "a", "type": {"type": "array", "items": "long"}},
          {"name": "m", "type": {"type": "map", "values": "int"}}]})") +
                     Block(1, arr + map);
  auto values = ReadValues(file);
  ASSERT_TRUE(values.ok()) << values.status().message();
  const Value& a = (*values)[0].items[0];
  ASSERT_EQ(a.items.size(), 4u);
  EXPECT_EQ(a.items[1].integer, -20);
  EXPECT_EQ(a.items[3].integer, 40);
  const Value& m = (*values)[0].items[1];
  EXPECT_EQ(m.keys, std::vector<std::string>{"k"});
  EXPECT_EQ(m.items[0].integer, 7);
  // Without a codec entry the codec is null; metadata may come in a
  // negative-count block too.
  std::string hdr("Obj\x01", 4);
  std::string kv = AvroBytes("avro.schema") + AvroBytes(R"("long")");
  hdr += Varint(-1) + Varint(static_cast<int64_t>(kv.size())) + kv + Varint(0) + kSync;
  auto longs = ReadValues(hdr + Block(2, Varint(5) + Varint(-6)));
  ASSERT_TRUE(longs.ok()) << longs.status().message();
  ASSERT_EQ(longs->size(), 2u);
  EXPECT_EQ((*longs)[1].integer, -6);
}

TEST(AvroOcfErrors, BadMagic) {
  std::string msg = ReadError("PAR1 not avro at all", "manifest /x/y.avro");
  EXPECT_NE(msg.find("manifest /x/y.avro: not an Avro file (magic 50415231"), std::string::npos)
      << msg;
  EXPECT_NE(ReadError("").find("not an Avro file"), std::string::npos);
  EXPECT_NE(ReadError("Ob").find("not an Avro file"), std::string::npos);
}

TEST(AvroOcfErrors, UnknownCodecAndMissingSchema) {
  auto r = OcfReader::Open(Header(R"("long")", "xz"), "manifest /x/y.avro");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(r.status().message(), "manifest /x/y.avro: unknown codec 'xz'");

  std::string hdr("Obj\x01", 4);
  hdr += Varint(1) + AvroBytes("avro.codec") + AvroBytes("null") + Varint(0) + kSync;
  EXPECT_NE(ReadError(hdr, "f.avro").find("f.avro: header has no avro.schema"), std::string::npos);

  std::string msg = ReadError(Header(R"({"type": "recrd"})"), "f.avro");
  EXPECT_NE(msg.find("f.avro: avro.schema: invalid Avro schema at $: unknown type 'recrd'"),
            std::string::npos)
      << msg;
}

std::string SmallValidFile(Codec codec, int rows = 40) {
  auto schema = ParseSchema(R"({"type": "record", "name": "r", "fields": [
      {"name": "s", "type": "string"}, {"name": "l", "type": ["null", "long"]}]})");
  auto w = OcfWriter::Make(*schema, {{"k", "v"}}, codec);
  for (int i = 0; i < rows; ++i) {
    Status st = (*w)->Append(Value::Record({Value::String(std::string(i, 'x')), Value::Long(i)}));
    EXPECT_TRUE(st.ok());
  }
  return std::move(*(*w)->Finish());
}

TEST(AvroOcfErrors, EveryTruncationFailsCleanly) {
  for (Codec codec : {Codec::kNull, Codec::kDeflate, Codec::kSnappy, Codec::kZstd}) {
    std::string file = SmallValidFile(codec);
    ASSERT_EQ(ReadError(file), "");
    // A file cut right after its header is a valid empty file: Avro has no
    // footer, so truncation at a block boundary is undetectable.
    const size_t header_size = SplitOneBlock(file).header.size();
    bool saw_eof = false, saw_truncated = false;
    for (size_t n = 0; n < file.size(); ++n) {
      if (n == header_size) continue;
      std::string msg = ReadError(file.substr(0, n), "manifest /x/y.avro");
      ASSERT_FALSE(msg.empty()) << "prefix " << n << " read without error";
      EXPECT_EQ(msg.rfind("manifest /x/y.avro: ", 0), 0u) << msg;
      saw_eof |= msg.find("unexpected end of data at byte") != std::string::npos;
      saw_truncated |= msg.find("(file truncated or corrupt)") != std::string::npos;
    }
    EXPECT_TRUE(saw_eof);
    EXPECT_TRUE(saw_truncated);
  }
}

TEST(AvroOcfErrors, BadSyncMarker) {
  // Two blocks: corrupt the sync marker after the second one.
  std::string file = Header(R"("long")") + Block(1, Varint(1)) + Block(1, Varint(2));
  ASSERT_EQ(ReadError(file), "");
  file[file.size() - 1] ^= 0x55;
  EXPECT_EQ(ReadError(file, "manifest /x/y.avro"),
            "manifest /x/y.avro: bad sync marker after block 2 (file truncated or corrupt)");
  // Writer output: flip a byte of the first block's trailing sync marker.
  std::string big = SmallValidFile(Codec::kNull, 3000);
  std::string sync = big.substr(big.size() - 16);
  size_t first = big.find(sync, big.find(sync) + 16);  // header sync, then block 1's
  ASSERT_NE(first, std::string::npos);
  ASSERT_LT(first + 16, big.size());
  big[first + 3] ^= 1;
  EXPECT_NE(ReadError(big).find("bad sync marker after block 1"), std::string::npos)
      << ReadError(big);
}

TEST(AvroOcfErrors, HugeCountsAndLengthsAreRejectedBeforeAllocating) {
  const std::string arr_schema = R"({"type": "array", "items": "long"})";
  struct Case {
    std::string file;
    const char* message;
  } cases[] = {
      // Block claims far more objects than its bytes could hold.
      {Header(R"("long")") + Block(int64_t{1} << 50, Varint(1)), "claims 1125899906842624 objects"},
      // Block size larger than the file.
      {Header(R"("long")") + Varint(1) + Varint(int64_t{1} << 40) + Varint(1),
       "declares 1099511627776 bytes"},
      {Header(R"("long")") + Varint(-1) + Varint(1) + Varint(1) + kSync, "negative object count"},
      {Header(arr_schema) + Block(1, Varint(int64_t{1} << 40) + Varint(1)),
       "array count 1099511627776"},
      {Header(R"({"type": "map", "values": "null"})") +
           Block(1, Varint(int64_t{1} << 40) + AvroBytes("k")),
       "map count 1099511627776"},
      {Header(arr_schema) + Block(1, Varint(std::numeric_limits<int64_t>::min())),
       "invalid block count"},
      {Header(R"("string")") + Block(1, Varint(int64_t{1} << 35) + "abc"),
       "string length 34359738368 at byte 0 exceeds the 3 bytes remaining"},
      {Header(R"("bytes")") + Block(1, Varint(-5)), "negative bytes length -5"},
      // Zero-byte items cost nothing to claim, so they are bounded too.
      {Header(R"({"type": "array", "items": "null"})") +
           Block(1, Varint(int64_t{1} << 40) + Varint(0)),
       "array count 1099511627776 at byte 0 exceeds the 1 bytes remaining"},
      {Header(R"("null")") + Block(int64_t{1} << 40, ""),
       "block 1 claims 1099511627776 objects but holds only 0 bytes"},
      {Header(R"("null")") + Block(40000, "") + Block(40000, ""),
       "block 2 claims 40000 objects but holds only 0 bytes"},
      // Ten-byte varint with more than 64 bits.
      {Header(R"("long")") + Block(1, std::string(9, '\xff') + "\x02"), "varint overflows 64 bits"},
      {Header(R"("int")") + Block(1, Varint(int64_t{1} << 33)),
       "int value 8589934592 out of range"},
      {Header(R"(["null", "long"])") + Block(1, Varint(2)), "union branch 2 out of range"},
      {Header(R"({"type": "enum", "name": "E", "symbols": ["A"]})") + Block(1, Varint(1)),
       "enum index 1 out of range"},
      {Header(R"("boolean")") + Block(1, "\x02"), "invalid boolean byte 2"},
      {Header(R"("long")") + Block(1, Varint(1) + "zz"),
       "block 1 has 2 bytes left after its 1 objects"},
      {Header(R"("long")") + Block(0, "zz"), "block 1 has no objects but 2 bytes"},
      {Header(R"("long")") + Block(2, Varint(1) + "\x80"),
       "block 1 object 1: unexpected end of data at byte 2"},
      {Header(R"("double")") + Block(1, "1234567"), "unexpected end of data at byte 7"},
      {Header(R"({"type": "fixed", "name": "F", "size": 100})") + Block(1, "short"),
       "unexpected end of data"},
      {Header(R"("long")", "deflate") + Block(1, "\xff\xff\xff"), "deflate"},
      {Header(R"("long")", "snappy") + Block(1, "\x05"), "snappy"},
      {Header(R"("long")", "snappy") + Block(1,
                                             "\xff\xff\xff\xff\x0f"
                                             "abcd"),
       "snappy"},
      {Header(R"("long")", "zstandard") + Block(1, "notzstd"), "zstandard"},
  };
  for (const Case& c : cases) {
    std::string msg = ReadError(c.file, "f.avro");
    EXPECT_NE(msg.find(c.message), std::string::npos) << "want: " << c.message << "\n got: " << msg;
    EXPECT_EQ(msg.rfind("f.avro: ", 0), 0u) << msg;
  }
}

TEST(AvroOcfErrors, ZeroByteValuesAreBounded) {
  // Modest numbers of zero-byte values are fine.
  auto nulls = ReadValues(Header(R"({"type": "array", "items": "null"})") +
                          Block(2, Varint(1000) + Varint(0) + Varint(0)));
  ASSERT_TRUE(nulls.ok()) << nulls.status().message();
  EXPECT_EQ((*nulls)[0].items.size(), 1000u);
  auto null_datums = ReadValues(Header(R"("null")") + Block(60000, ""));
  ASSERT_TRUE(null_datums.ok()) << null_datums.status().message();
  EXPECT_EQ(null_datums->size(), 60000u);
  // R0 = {}, Ri = {a: R(i-1), b: R(i-1)}: a 0-byte datum of R40 would hold
  // 2^41 values. It must fail fast, and the writer must not walk 2^40 paths.
  std::string schema = R"({"type": "record", "name": "R0", "fields": []})";
  for (int i = 1; i <= 40; ++i) {
    schema = fmt::format(R"({{"type": "record", "name": "R{}", "fields": [)"
                         R"({{"name": "a", "type": {}}}, {{"name": "b", "type": "R{}"}}]}})",
                         i, schema, i - 1);
  }
  auto start = std::chrono::steady_clock::now();
  auto reader = OcfReader::Open(Header(schema) + Block(1, ""), "dag.avro");
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  auto values = (*reader)->ReadAll();
  ASSERT_FALSE(values.ok());
  EXPECT_NE(values.status().message().find(
                "dag.avro: block 1 object 0: 65536 values decoded from only 0 bytes"),
            std::string::npos)
      << values.status().message();
  auto writer = OcfWriter::Make((*reader)->schema_ptr(), {}, Codec::kNull);
  EXPECT_TRUE(writer.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(AvroOcfErrors, CompressedBlockCorruption) {
  // Snappy: the CRC32 (the 4 bytes before the final sync) must match.
  std::string snappy = SmallValidFile(Codec::kSnappy);
  snappy[snappy.size() - 17] ^= 1;
  EXPECT_NE(ReadError(snappy, "f").find("f: block 1: snappy block fails its CRC32 check"),
            std::string::npos)
      << ReadError(snappy);
  // Compressed payloads cut short inside an intact block frame.
  for (Codec codec : {Codec::kDeflate, Codec::kSnappy, Codec::kZstd}) {
    OneBlock b = SplitOneBlock(SmallValidFile(codec));
    ASSERT_EQ(ReadError(b.With(b.payload)), "");
    for (size_t keep : {size_t{0}, b.payload.size() / 2, b.payload.size() - 1}) {
      std::string msg = ReadError(b.With(b.payload.substr(0, keep)), "f");
      EXPECT_NE(msg.find("f: block 1: "), std::string::npos) << msg;
      EXPECT_NE(msg.find(CodecName(codec) == "zstandard" ? "zstandard" : CodecName(codec)),
                std::string::npos)
          << msg;
    }
  }
  // Deflate garbage.
  std::string msg = ReadError(Header(R"("long")", "deflate") + Block(1, "\xff\xff\xff"));
  EXPECT_NE(msg.find("invalid deflate data"), std::string::npos) << msg;
}

// Java's zstd codec streams, so frames lack a content size; a block may also
// hold several frames. Both take the streaming path.
TEST(AvroOcf, ZstdFramesWithoutContentSize) {
  auto frame = [](const std::string& data) {
    ZSTD_CCtx* cctx = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
    std::string out(ZSTD_compressBound(data.size()), '\0');
    size_t n = ZSTD_compress2(cctx, out.data(), out.size(), data.data(), data.size());
    ZSTD_freeCCtx(cctx);
    EXPECT_FALSE(ZSTD_isError(n));
    out.resize(n);
    EXPECT_EQ(ZSTD_getFrameContentSize(out.data(), out.size()), ZSTD_CONTENTSIZE_UNKNOWN);
    return out;
  };
  std::string big(300000, 'z');  // larger than the first output chunk
  std::string datums = AvroBytes(big) + AvroBytes("second");
  std::string file = Header(R"("string")", "zstandard") + Block(2, frame(datums)) +
                     Block(2, frame(datums.substr(0, 10)) + frame(datums.substr(10)));
  auto values = ReadValues(file);
  ASSERT_TRUE(values.ok()) << values.status().message();
  ASSERT_EQ(values->size(), 4u);
  EXPECT_EQ((*values)[0].bytes, big);
  EXPECT_EQ((*values)[3].bytes, "second");
  std::string cut = frame(datums);
  cut.resize(cut.size() - 5);
  std::string msg = ReadError(Header(R"("string")", "zstandard") + Block(2, cut));
  EXPECT_NE(msg.find("zstandard"), std::string::npos) << msg;
}

// --- pyiceberg cross-check -------------------------------------------------------

Result<std::string> ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return Status::IOError("cannot open {}", p.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string LocalPath(std::string p) {
  if (p.rfind("file://", 0) == 0) p = p.substr(7);
  return p;
}

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

struct ListTotals {
  int manifests = 0;
  int manifests_checked = 0;
  int64_t added_rows = 0;
  int64_t added_files = 0;
};

// Checks one manifest against the manifest list entry that names it: ADDED /
// EXISTING / DELETED file and row counts must match the list's counts.
void CheckManifest(const fs::path& path, const Value& list_entry, int* data_entries) {
  SCOPED_TRACE(path.string());
  auto bytes = ReadFile(path);
  ASSERT_TRUE(bytes.ok());
  auto reader = OcfReader::Open(std::move(*bytes), "manifest " + path.string());
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  OcfReader& r = **reader;
  for (const char* key : {"schema", "partition-spec", "format-version", "content"}) {
    EXPECT_TRUE(r.Meta(key).has_value()) << "missing metadata key " << key;
  }
  // The Iceberg schema and spec in the header are JSON.
  EXPECT_FALSE(nlohmann::json::parse(r.Meta("schema").value_or(""), nullptr, false).is_discarded());
  EXPECT_FALSE(
      nlohmann::json::parse(r.Meta("partition-spec").value_or(""), nullptr, false).is_discarded());
  const Schema& s = r.schema();
  EXPECT_EQ(s.name, "manifest_entry");
  ASSERT_GE(s.FieldIndexById(2), 0);
  const Schema& df = *s.fields[s.FieldIndexById(2)].schema;
  EXPECT_EQ(df.fields[df.FieldIndex("file_path")].field_id, 100);
  EXPECT_EQ(df.fields[df.FieldIndex("record_count")].field_id, 103);

  auto entries = r.ReadAll();
  ASSERT_TRUE(entries.ok()) << entries.status().message();
  int64_t files[3] = {0, 0, 0}, rows[3] = {0, 0, 0};
  bool data = r.Meta("content") == "data";
  for (const Value& e : *entries) {
    int64_t status = e.GetById(0)->integer;
    ASSERT_TRUE(status >= 0 && status <= 2);
    const Value* file = e.GetById(2);
    ASSERT_NE(file, nullptr);
    const Value* file_path = file->GetById(100);
    ASSERT_NE(file_path, nullptr);
    if (data) {
      EXPECT_TRUE(EndsWith(file_path->bytes, ".parquet")) << file_path->bytes;
      ++*data_entries;
    }
    files[status] += 1;
    rows[status] += file->GetById(103)->integer;
  }
  // Manifest list field ids: 504/505/506 file counts, 512/513/514 row counts.
  const int32_t file_ids[3] = {505, 504, 506}, row_ids[3] = {513, 512, 514};
  for (int st = 0; st < 3; ++st) {
    const Value* f = list_entry.GetById(file_ids[st]);
    const Value* n = list_entry.GetById(row_ids[st]);
    if (f && !f->is_null()) {
      EXPECT_EQ(f->integer, files[st]) << "status " << st;
    }
    if (n && !n->is_null()) {
      EXPECT_EQ(n->integer, rows[st]) << "status " << st;
    }
  }

  // Our writer reproduces the manifest: same schema, metadata and datums.
  for (Codec codec : {Codec::kNull, Codec::kDeflate, Codec::kSnappy, Codec::kZstd}) {
    auto w = OcfWriter::Make(r.schema_ptr(), r.metadata(), codec);
    ASSERT_TRUE(w.ok());
    for (const Value& e : *entries) ASSERT_TRUE((*w)->Append(e).ok());
    auto again = OcfReader::Open(std::move(*(*w)->Finish()), "rewritten");
    ASSERT_TRUE(again.ok()) << again.status().message();
    EXPECT_EQ((*again)->Meta("schema"), r.Meta("schema"));
    auto values = (*again)->ReadAll();
    ASSERT_TRUE(values.ok());
    ASSERT_EQ(values->size(), entries->size());
    for (size_t i = 0; i < values->size(); ++i) ExpectSame((*entries)[i], (*values)[i], "entry");
  }
}

void CheckManifestList(const fs::path& path, ListTotals* totals, int* data_entries) {
  SCOPED_TRACE(path.string());
  auto bytes = ReadFile(path);
  ASSERT_TRUE(bytes.ok());
  auto reader = OcfReader::Open(std::move(*bytes), "manifest list " + path.string());
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  const Schema& s = (*reader)->schema();
  EXPECT_EQ(s.name, "manifest_file");
  const std::pair<const char*, int32_t> required[] = {{"manifest_path", 500},
                                                      {"manifest_length", 501},
                                                      {"partition_spec_id", 502},
                                                      {"added_snapshot_id", 503}};
  for (const auto& [name, id] : required) {
    int i = s.FieldIndex(name);
    ASSERT_GE(i, 0) << name;
    EXPECT_EQ(s.fields[i].field_id, id) << name;
  }
  if (int p = s.FieldIndexById(507); p >= 0) {
    const Schema& parts = *s.fields[p].schema;
    ASSERT_EQ(parts.type, Type::kUnion);
    EXPECT_EQ(parts.branches[1]->element_id, 508);
  }
  auto entries = (*reader)->ReadAll();
  ASSERT_TRUE(entries.ok()) << entries.status().message();
  for (const Value& m : *entries) {
    ++totals->manifests;
    std::string manifest = LocalPath(m.GetById(500)->bytes);
    EXPECT_TRUE(EndsWith(manifest, ".avro")) << manifest;
    const Value* rows = m.GetById(512);
    const Value* files = m.GetById(504);
    if (rows && !rows->is_null()) totals->added_rows += rows->integer;
    if (files && !files->is_null()) totals->added_files += files->integer;
    std::error_code ec;
    if (fs::is_regular_file(manifest, ec)) {
      ++totals->manifests_checked;
      CheckManifest(manifest, m, data_entries);
      int64_t length = m.GetById(501)->integer;
      EXPECT_EQ(static_cast<uintmax_t>(length), fs::file_size(manifest, ec));
    }
  }
}

fs::path ScriptPath() {
#ifdef THAW_SOURCE_DIR
  return fs::path(THAW_SOURCE_DIR) / "tests/unit/iceberg/make_avro_fixture.py";
#else
  return fs::path(__FILE__).parent_path() / "make_avro_fixture.py";
#endif
}

// Set THAW_PYTHON to a python with pyiceberg (e.g. .deps/venv/bin/python).
TEST(AvroPyiceberg, ReadsManifestsOfAFreshTable) {
  const char* python = std::getenv("THAW_PYTHON");
  if (python == nullptr || *python == '\0') GTEST_SKIP() << "THAW_PYTHON is not set";
  char tmpl[] = "/tmp/thaw_avro_fixture_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  fs::path dir(tmpl);
  std::string cmd =
      std::string("'") + python + "' '" + ScriptPath().string() + "' '" + dir.string() + "'";
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  int rc = pclose(pipe);
  if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77) {
    fs::remove_all(dir);
    GTEST_SKIP() << "pyiceberg not available to " << python;
  }
  ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << cmd << "\n" << out;
  auto info = nlohmann::json::parse(out, nullptr, false);
  ASSERT_FALSE(info.is_discarded()) << out;

  ListTotals totals;
  int data_entries = 0;
  CheckManifestList(info["manifest_list"].get<std::string>(), &totals, &data_entries);
  EXPECT_EQ(totals.manifests, static_cast<int>(info["manifests"].size()));
  EXPECT_EQ(totals.manifests_checked, totals.manifests);
  EXPECT_EQ(totals.added_rows, info["rows"].get<int64_t>());
  EXPECT_EQ(totals.added_files, info["data_files"].get<int64_t>());
  EXPECT_EQ(data_entries, info["data_files"].get<int>());

  // Specifics of this table: snapshot id, identity partition, bounds maps.
  auto list = ReadFile(info["manifest_list"].get<std::string>());
  auto list_values = ReadValues(std::move(*list));
  ASSERT_TRUE(list_values.ok());
  EXPECT_EQ((*list_values)[0].GetById(503)->integer, info["snapshot_id"].get<int64_t>());
  auto manifest = ReadFile(info["manifests"][0].get<std::string>());
  auto reader = OcfReader::Open(std::move(*manifest), "manifest");
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->Meta("format-version"), "2");
  EXPECT_EQ((*reader)->Meta("content"), "data");
  auto entries = (*reader)->ReadAll();
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 2u);
  int64_t rows = 0;
  std::set<int64_t> parts;
  for (const Value& e : *entries) {
    const Value& df = *e.GetById(2);
    rows += df.GetById(103)->integer;
    const Value* part = df.GetById(102);
    ASSERT_EQ(part->type, Type::kRecord);
    parts.insert(part->GetById(1000)->integer);
    const Value* lower = df.GetById(125);
    ASSERT_EQ(lower->type, Type::kArray);
    EXPECT_EQ(lower->schema->logical_type, "map");
    EXPECT_EQ(lower->schema->key_id, 126);
    EXPECT_EQ(lower->schema->value_id, 127);
    ASSERT_EQ(lower->items.size(), 3u);  // id, name, part
    EXPECT_EQ(lower->items[0].GetById(126)->integer, 1);
    EXPECT_EQ(lower->items[0].GetById(127)->bytes.size(), 8u);  // little-endian long
  }
  EXPECT_EQ(rows, 7);
  EXPECT_EQ(parts, (std::set<int64_t>{0, 1}));
  std::error_code ec;
  fs::remove_all(dir, ec);
}

// Set THAW_TEST_FIXTURES to a directory holding Iceberg tables (any layout):
// every snap-*.avro manifest list under it is checked.
TEST(AvroPyiceberg, ReadsEveryManifestInFixtureDirectory) {
  const char* dir = std::getenv("THAW_TEST_FIXTURES");
  if (dir == nullptr || *dir == '\0') GTEST_SKIP() << "THAW_TEST_FIXTURES is not set";
  std::vector<fs::path> lists;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_regular_file(ec) && name.rfind("snap-", 0) == 0 && EndsWith(name, ".avro")) {
      lists.push_back(it->path());
    }
  }
  if (lists.empty()) GTEST_SKIP() << "no snap-*.avro manifest lists under " << dir;
  ListTotals totals;
  int data_entries = 0;
  for (const fs::path& p : lists) {
    CheckManifestList(p, &totals, &data_entries);
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(totals.manifests, 0);
  RecordProperty("manifest_lists", static_cast<int>(lists.size()));
  RecordProperty("manifests_checked", totals.manifests_checked);
}

// Next() decodes in place into the caller's Value, reusing nested storage:
// arrays and maps that shrink, grow or vanish between datums must still read
// exactly what was written.
TEST(AvroOcf, NextIntoTheSameValueReusesStorageCorrectly) {
  auto schema = ParseSchema(R"({"type":"record","name":"r","fields":[
      {"name":"a","type":{"type":"array","items":"long"}},
      {"name":"m","type":["null",{"type":"map","values":"string"}]}]})");
  ASSERT_TRUE(schema.ok());
  auto w = OcfWriter::Make(*schema, {}, Codec::kNull);
  ASSERT_TRUE(w.ok());
  std::vector<std::vector<int64_t>> arrays = {{1, 2, 3, 4}, {}, {7}, {8, 9, 10, 11, 12, 13}};
  for (size_t i = 0; i < arrays.size(); ++i) {
    std::vector<Value> items;
    for (int64_t x : arrays[i]) items.push_back(Value::Long(x));
    Value m = i % 2 ? Value::Null() : Value::Map({"k" + std::to_string(i)}, {Value::String("v")});
    ASSERT_TRUE((*w)->Append(Value::Record({Value::Array(items), m})).ok());
  }
  auto bytes = (*w)->Finish();
  ASSERT_TRUE(bytes.ok());
  auto r = OcfReader::Open(*bytes, "x");
  ASSERT_TRUE(r.ok());
  Value v;
  for (size_t i = 0; i < arrays.size(); ++i) {
    ASSERT_TRUE(*(*r)->Next(&v));
    const Value* a = v.Get("a");
    ASSERT_EQ(a->items.size(), arrays[i].size()) << i;
    for (size_t k = 0; k < arrays[i].size(); ++k) EXPECT_EQ(a->items[k].integer, arrays[i][k]);
    const Value* m = v.Get("m");
    if (i % 2) {
      EXPECT_TRUE(m->is_null());
    } else {
      ASSERT_EQ(m->keys.size(), 1u);
      EXPECT_EQ(m->keys[0], "k" + std::to_string(i));
    }
  }
}

}  // namespace
}  // namespace thaw::avro

// Avro schemas derived from Iceberg structs (records/avro_derive.h): the
// mapping, its round trip through AvroValueSchema (the derived schema
// resolves against the struct it came from and encodes its rows), and the
// refusals naming the column.
#include "thaw/records/avro_derive.h"

#include <arrow/api.h>
#include <arrow/json/from_string.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "thaw/records/avro_value.h"

namespace thaw::records {
namespace {

iceberg::TypePtr Struct(const char* json) {
  auto t = iceberg::ParseType(nlohmann::json::parse(json));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return *t;
}

TEST(AvroDerive, EveryMappedTypeRoundTripsThroughTheAvroMapping) {
  auto t = Struct(R"j({"type": "struct", "fields": [
      {"id": 1, "name": "b", "required": true, "type": "boolean"},
      {"id": 2, "name": "i", "required": false, "type": "int"},
      {"id": 3, "name": "l", "required": true, "type": "long"},
      {"id": 4, "name": "f", "required": true, "type": "float"},
      {"id": 5, "name": "d", "required": true, "type": "double"},
      {"id": 6, "name": "s", "required": false, "type": "string"},
      {"id": 7, "name": "bin", "required": true, "type": "binary"},
      {"id": 8, "name": "fx", "required": true, "type": "fixed[3]"},
      {"id": 9, "name": "dec", "required": true, "type": "decimal(10, 2)"},
      {"id": 10, "name": "day", "required": true, "type": "date"},
      {"id": 11, "name": "tod", "required": true, "type": "time"},
      {"id": 12, "name": "ts", "required": true, "type": "timestamptz"},
      {"id": 13, "name": "local", "required": true, "type": "timestamp"},
      {"id": 14, "name": "tags", "required": false,
       "type": {"type": "list", "element-id": 15, "element-required": false, "element": "string"}},
      {"id": 16, "name": "attrs", "required": true,
       "type": {"type": "map", "key-id": 17, "key": "string", "value-id": 18, "value-required": true, "value": "long"}},
      {"id": 19, "name": "customer", "required": false, "type": {"type": "struct", "fields": [
          {"id": 20, "name": "name", "required": true, "type": "string"},
          {"id": 21, "name": "address", "required": false, "type": {"type": "struct", "fields": [
              {"id": 22, "name": "city", "required": true, "type": "string"}]}}]}}]})j");
  auto text = DeriveAvroSchema(*t, "thaw.orders");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  auto j = nlohmann::json::parse(*text);
  EXPECT_EQ(j["name"], "orders");
  EXPECT_EQ(j["namespace"], "thaw");
  EXPECT_EQ(j["fields"][1]["type"], nlohmann::json::parse(R"(["null", "int"])"));
  EXPECT_TRUE(j["fields"][1]["default"].is_null());
  EXPECT_FALSE(j["fields"][0].contains("default"));
  EXPECT_EQ(j["fields"][8]["type"],
            nlohmann::json::parse(R"({"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2})"));
  EXPECT_EQ(j["fields"][12]["type"]["logicalType"], "local-timestamp-micros");
  EXPECT_EQ(j["fields"][15]["type"][1]["name"], "Customer");
  // The inverse mapping gives the struct back: the schema resolves against it, field for field.
  auto resolved = AvroValueSchema::Resolve(*text, t);
  ASSERT_TRUE(resolved.ok()) << resolved.status().ToString();
  auto own = AvroValueSchema::Make(*text, 1);
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  EXPECT_EQ((*own)->iceberg_type()->ToString(), t->ToString());
}

TEST(AvroDerive, RefusalsNameTheColumn) {
  auto geo = Struct(R"({"type": "struct", "fields": [{"id": 1, "name": "g", "required": true, "type": "variant"}]})");
  EXPECT_EQ(DeriveAvroSchema(*geo, "thaw.t").status().message(),
            "column 'g' has type variant, which the Avro encoding cannot hold (no Avro counterpart)");
  auto map = Struct(R"({"type": "struct", "fields": [{"id": 1, "name": "outer", "required": true, "type":
      {"type": "struct", "fields": [{"id": 2, "name": "m", "required": true, "type":
      {"type": "map", "key-id": 3, "key": "int", "value-id": 4, "value-required": true, "value": "long"}}]}}]})");
  EXPECT_EQ(DeriveAvroSchema(*map, "thaw.t").status().message(),
            "column 'outer.m' has type map<int, long>, which the Avro encoding cannot hold (Avro map keys are strings)");
  auto name = Struct(R"({"type": "struct", "fields": [{"id": 1, "name": "order-id", "required": true, "type": "long"}]})");
  EXPECT_EQ(DeriveAvroSchema(*name, "thaw.t").status().message(),
            "column 'order-id' cannot be an Avro field: 'order-id' is not an Avro name ([A-Za-z_][A-Za-z0-9_]*)");
  auto fine = Struct(R"({"type": "struct", "fields": [{"id": 1, "name": "a", "required": true, "type": "long"}]})");
  ASSERT_TRUE(DeriveAvroSchema(*fine, "thaw.good_name").ok());
  EXPECT_FALSE(DeriveAvroSchema(*fine, "thaw.bad-name").ok()) << "the record's own name must be an Avro name";
}

TEST(AvroDerive, StructsOfTheSameNameGetUniqueRecordNames) {
  auto t = Struct(R"({"type": "struct", "fields": [
      {"id": 1, "name": "a", "required": true, "type": {"type": "struct", "fields": [
          {"id": 2, "name": "item", "required": true, "type": {"type": "struct", "fields": [
              {"id": 3, "name": "x", "required": true, "type": "int"}]}}]}},
      {"id": 4, "name": "b", "required": true, "type": {"type": "struct", "fields": [
          {"id": 5, "name": "item", "required": true, "type": {"type": "struct", "fields": [
              {"id": 6, "name": "y", "required": true, "type": "int"}]}}]}}]})");
  auto text = DeriveAvroSchema(*t, "Value");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  auto j = nlohmann::json::parse(*text);
  EXPECT_EQ(j["fields"][0]["type"]["fields"][0]["type"]["name"], "Item");
  EXPECT_EQ(j["fields"][1]["type"]["fields"][0]["type"]["name"], "Item2");
  EXPECT_TRUE(AvroValueSchema::Resolve(*text, t).ok());
}

TEST(AvroDerive, UuidAndNanosecondColumnsEncodeAsTheirLogicalTypes) {
  auto t = Struct(R"({"type": "struct", "fields": [
      {"id": 1, "name": "u", "required": false, "type": "uuid"},
      {"id": 2, "name": "at", "required": true, "type": "timestamptz_ns"},
      {"id": 3, "name": "local", "required": true, "type": "timestamp_ns"}]})");
  auto text = DeriveAvroSchema(*t, "thaw.t");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  auto j = nlohmann::json::parse(*text);
  EXPECT_EQ(j["fields"][0]["type"][1], nlohmann::json::parse(R"({"type": "string", "logicalType": "uuid"})"));
  EXPECT_EQ(j["fields"][1]["type"], nlohmann::json::parse(R"({"type": "long", "logicalType": "timestamp-nanos"})"));
  EXPECT_EQ(j["fields"][2]["type"]["logicalType"], "local-timestamp-nanos");
  auto codec = AvroValueSchema::Resolve(*text, t);
  ASSERT_TRUE(codec.ok()) << codec.status().ToString();
  // The row {u: 123e4567-e89b-12d3-a456-426614174000, at: 1 ns, local: -2 ns}, and a null uuid.
  arrow::FixedSizeBinaryBuilder ub(arrow::fixed_size_binary(16));
  const uint8_t uuid[16] = {0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3, 0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0x00};
  ASSERT_TRUE(ub.Append(uuid).ok() && ub.AppendNull().ok());
  std::shared_ptr<arrow::Array> u;
  ASSERT_TRUE(ub.Finish(&u).ok());
  auto at = arrow::json::ArrayFromJSONString(arrow::timestamp(arrow::TimeUnit::NANO, "UTC"), "[1, 0]").ValueOrDie();
  auto local = arrow::json::ArrayFromJSONString(arrow::timestamp(arrow::TimeUnit::NANO), "[-2, 0]").ValueOrDie();
  auto made = arrow::StructArray::Make({u, at, local}, std::vector<std::string>{"u", "at", "local"});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  const auto& a = **made;
  std::string datum;
  Status encoded = (*codec)->Encode(a, 0, std::nullopt, &datum);
  ASSERT_TRUE(encoded.ok()) << encoded.ToString();
  // union branch 1, the 36-character text, then zigzag 1 and -2.
  EXPECT_EQ(datum, std::string("\x02\x48") + "123e4567-e89b-12d3-a456-426614174000" + "\x02\x03");
  auto b = (*codec)->MakeBuilder();
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE((*codec)->Decode(datum, false, b->get()).ok());
  std::string null_datum;
  ASSERT_TRUE((*codec)->Encode(a, 1, std::nullopt, &null_datum).ok());
  ASSERT_TRUE((*codec)->Decode(null_datum, false, b->get()).ok());
  std::shared_ptr<arrow::Array> back;
  ASSERT_TRUE((*b)->Finish(&back).ok());
  EXPECT_EQ(back->ToString(), a.ToString());
  // Text that is not a uuid does not decode into the uuid column.
  auto c = (*codec)->MakeBuilder();
  EXPECT_FALSE((*codec)->Decode(std::string("\x02\x06") + "nouuid" + "\x02\x03", false, c->get()).ok());
}

}  // namespace
}  // namespace thaw::records

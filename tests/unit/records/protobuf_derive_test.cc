// Protobuf schemas derived from Iceberg structs (records/protobuf_derive.h):
// the .proto text, its round trip through ProtobufValueSchema (the derived
// message resolves against the struct it came from, and rows encode to
// messages that decode back to the same rows), and the refusals naming the
// column.
#include "thaw/records/protobuf_derive.h"

#include <arrow/api.h>
#include <arrow/json/from_string.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "thaw/records/protobuf_value.h"
#include "thaw/records/struct_fields.h"

namespace thaw::records {
namespace {

iceberg::TypePtr Struct(const char* json) {
  auto t = iceberg::ParseType(nlohmann::json::parse(json));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return *t;
}

constexpr char kOrder[] = R"j({"type": "struct", "fields": [
    {"id": 1, "name": "id", "required": true, "type": "long"},
    {"id": 2, "name": "qty", "required": false, "type": "int"},
    {"id": 3, "name": "paid", "required": false, "type": "boolean"},
    {"id": 4, "name": "price", "required": false, "type": "double"},
    {"id": 5, "name": "ratio", "required": false, "type": "float"},
    {"id": 6, "name": "note", "required": false, "type": "string"},
    {"id": 7, "name": "blob", "required": false, "type": "binary"},
    {"id": 8, "name": "tags", "required": false,
     "type": {"type": "list", "element-id": 9, "element-required": true, "element": "string"}},
    {"id": 10, "name": "counts", "required": false,
     "type": {"type": "map", "key-id": 11, "key": "string", "value-id": 12, "value-required": false, "value": "long"}},
    {"id": 13, "name": "customer", "required": false, "type": {"type": "struct", "fields": [
        {"id": 14, "name": "name", "required": false, "type": "string"},
        {"id": 15, "name": "home_address", "required": false, "type": {"type": "struct", "fields": [
            {"id": 16, "name": "city", "required": false, "type": "string"}]}}]}},
    {"id": 17, "name": "lines", "required": false,
     "type": {"type": "list", "element-id": 18, "element-required": true, "element": {"type": "struct", "fields": [
        {"id": 19, "name": "sku", "required": false, "type": "string"}]}}}]})j";

TEST(ProtobufDerive, TheMessageDeclaresEveryColumnInOrder) {
  auto text = DeriveProtobufSchema(*Struct(kOrder), "thaw.orders");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, R"(syntax = "proto3";
package thaw;

message orders {
  message Customer {
    message HomeAddress {
      optional string city = 1;
    }
    optional string name = 1;
    HomeAddress home_address = 2;
  }
  message Lines {
    optional string sku = 1;
  }
  optional int64 id = 1;
  optional int32 qty = 2;
  optional bool paid = 3;
  optional double price = 4;
  optional float ratio = 5;
  optional string note = 6;
  optional bytes blob = 7;
  repeated string tags = 8;
  map<string, int64> counts = 9;
  Customer customer = 10;
  repeated Lines lines = 11;
}
)");
  auto names = ProtobufValueSchema::MessageNames(*text);
  ASSERT_TRUE(names.ok()) << names.status().ToString();
  EXPECT_EQ(*names, std::vector<std::string>{"thaw.orders"});
}

TEST(ProtobufDerive, RowsEncodeToMessagesThatDecodeBackToTheRows) {
  auto t = Struct(kOrder);
  auto text = DeriveProtobufSchema(*t, "thaw.orders");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  auto codec = ProtobufValueSchema::Resolve(*text, "thaw.orders", t);
  ASSERT_TRUE(codec.ok()) << codec.status().ToString();
  // Nulls are absent fields and zeros present ones: both come back as they were.
  auto rows = arrow::json::ArrayFromJSONString((*codec)->arrow_type(), R"([
      {"id": 1, "qty": 0, "paid": false, "price": 2.5, "ratio": 0.5, "note": "", "blob": "xy",
       "tags": ["a", "b"], "counts": [["k", 3]], "customer": {"name": "ann", "home_address": {"city": "Oslo"}},
       "lines": [{"sku": "s1"}, {"sku": null}]},
      {"id": 2, "qty": null, "paid": null, "price": null, "ratio": null, "note": null, "blob": null,
       "tags": [], "counts": [], "customer": null, "lines": []}])");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  const auto& values = static_cast<const arrow::StructArray&>(**rows);
  const int32_t first[] = {0};
  auto own = ProtobufValueSchema::Make(*text, first, 1);
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  std::unique_ptr<arrow::ArrayBuilder> b;
  ASSERT_TRUE(arrow::MakeBuilder(arrow::default_memory_pool(), (*own)->arrow_type(), &b).ok());
  StructFields fields;
  for (int64_t i = 0; i < values.length(); ++i) {
    std::string framed;
    ASSERT_TRUE((*codec)->EncodeFramed(values, i, 42, &framed, &fields).ok());
    // Magic byte, id 42, message index [0] (written as the single byte 0).
    EXPECT_EQ(framed.substr(0, 6), std::string("\0\0\0\0\x2a\0", 6));
    ASSERT_TRUE((*own)->DecodeFramed(framed, static_cast<arrow::StructBuilder*>(b.get())).ok());
  }
  std::shared_ptr<arrow::Array> back;
  ASSERT_TRUE(b->Finish(&back).ok());
  EXPECT_EQ(back->ToString(), values.ToString());
}

TEST(ProtobufDerive, TypesProtobufLacksAreRefusedNamingTheColumn) {
  auto refused = [](const char* json) {
    auto text = DeriveProtobufSchema(*Struct(json), "thaw.t");
    EXPECT_FALSE(text.ok());
    return text.status().message();
  };
  EXPECT_EQ(refused(R"j({"type": "struct", "fields": [
      {"id": 1, "name": "a", "required": false, "type": {"type": "struct", "fields": [
          {"id": 2, "name": "ts", "required": false, "type": "timestamptz"}]}}]})j"),
            "column 'a.ts' is timestamptz: Protobuf has no such type (--value-format avro encodes it as an Avro "
            "logical type)");
  EXPECT_NE(refused(R"j({"type": "struct", "fields": [
      {"id": 1, "name": "d", "required": false, "type": "decimal(9, 2)"}]})j").find("column 'd' is decimal"),
            std::string::npos);
  EXPECT_NE(refused(R"j({"type": "struct", "fields": [
      {"id": 1, "name": "ll", "required": false,
       "type": {"type": "list", "element-id": 2, "element-required": true,
                "element": {"type": "list", "element-id": 3, "element-required": true, "element": "int"}}}]})j")
                .find("column 'll'"),
            std::string::npos);
  EXPECT_NE(refused(R"j({"type": "struct", "fields": [
      {"id": 1, "name": "m", "required": false,
       "type": {"type": "map", "key-id": 2, "key": "double", "value-id": 3, "value-required": true,
                "value": "int"}}]})j")
                .find("map keys are strings, integers or booleans"),
            std::string::npos);
  EXPECT_EQ(refused(R"j({"type": "struct", "fields": [
      {"id": 1, "name": "user_id", "required": false, "type": "long"},
      {"id": 2, "name": "userId", "required": false, "type": "long"}]})j"),
            "columns 'user_id' and 'userId' cannot both be fields of a Protobuf message: proto3 takes names that "
            "differ only in case or underscores as the same");
  EXPECT_NE(refused(R"j({"type": "struct", "fields": [
      {"id": 1, "name": "order-id", "required": false, "type": "long"}]})j")
                .find("column 'order-id' cannot be a Protobuf field"),
            std::string::npos);
}

}  // namespace
}  // namespace thaw::records

// JSON Schema writer schemas mapped to a row table's value struct, and
// Confluent-framed JSON values decoded into it and encoded back.
#include "thaw/records/json_schema_value.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

#include "thaw/parquet/arrow_type.h"
#include "thaw/registry/wire.h"
#include "thaw/records/struct_fields.h"

namespace thaw::records {
namespace {

using iceberg::TypeId;

constexpr char kOrder[] = R"({
  "$schema": "http://json-schema.org/draft-07/schema#",
  "title": "Order", "type": "object",
  "properties": {
    "id": {"type": "integer"},
    "customer": {"type": ["string", "null"]},
    "total": {"type": "number"},
    "paid": {"type": "boolean"},
    "items": {"type": "array", "items": {"$ref": "#/definitions/Item"}},
    "note": {"oneOf": [{"type": "null"}, {"type": "string"}]}
  },
  "required": ["id"],
  "definitions": {"Item": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}}}
})";

std::string Framed(int32_t id, std::string_view body) { return registry::Frame(id, {}, false, body); }

std::string Replaced(std::string s, std::string_view from, std::string_view to) {
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

// Decodes each framed value into one struct array of `codec`'s table type.
std::shared_ptr<arrow::StructArray> Decode(const JsonSchemaValue& codec, const std::vector<std::string>& values) {
  auto arrow_type = parquet::ArrowTypeOf(*codec.iceberg_type());
  EXPECT_TRUE(arrow_type.ok());
  std::unique_ptr<arrow::ArrayBuilder> b;
  EXPECT_TRUE(arrow::MakeBuilder(arrow::default_memory_pool(), *arrow_type, &b).ok());
  for (const auto& v : values) {
    Status st = codec.DecodeFramed(v, static_cast<arrow::StructBuilder*>(b.get()));
    EXPECT_TRUE(st.ok()) << st.ToString();
  }
  std::shared_ptr<arrow::Array> out;
  EXPECT_TRUE(b->Finish(&out).ok());
  return std::static_pointer_cast<arrow::StructArray>(out);
}

TEST(JsonSchemaValue, MapsTypesNullabilityAndLocalReferences) {
  auto s = JsonSchemaValue::Make(kOrder, 100);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const auto& t = *(*s)->iceberg_type();
  ASSERT_EQ(t.id, TypeId::kStruct);
  ASSERT_EQ(t.fields.size(), 6u);
  EXPECT_EQ(t.fields[0].name, "id");
  EXPECT_EQ(t.fields[0].id, 100);
  EXPECT_EQ(t.fields[0].type->id, TypeId::kLong);
  EXPECT_EQ(t.fields[1].type->id, TypeId::kString);
  EXPECT_EQ(t.fields[2].type->id, TypeId::kDouble);
  EXPECT_EQ(t.fields[3].type->id, TypeId::kBoolean);
  const auto& items = *t.fields[4].type;
  ASSERT_EQ(items.id, TypeId::kList);
  EXPECT_EQ(items.fields[0].id, 105);  // depth-first: the element, then its fields
  ASSERT_EQ(items.fields[0].type->id, TypeId::kStruct);
  EXPECT_EQ(items.fields[0].type->fields[0].name, "sku");
  EXPECT_EQ(items.fields[0].type->fields[1].id, 107);
  EXPECT_EQ(t.fields[5].id, 108);
  EXPECT_EQ(t.fields[5].type->id, TypeId::kString);
  for (const auto& f : t.fields) EXPECT_FALSE(f.required) << f.name;  // JSON may omit any field
}

TEST(JsonSchemaValue, RefusesWhatAColumnCannotHold) {
  auto refused = [](std::string_view text, std::string_view words) {
    auto s = JsonSchemaValue::Make(text, 1);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_NE(s.status().message().find(words), std::string::npos) << s.status().message();
  };
  refused(R"({"type":"object","properties":{"a":{"type":["string","integer"]}}})", "'a' has types");
  refused(R"({"type":"object","properties":{"m":{"type":"object"}}})", "'m' is an object without properties");
  refused(R"({"type":"object","properties":{"a":{"$ref":"other.json#/X"}}})", "the schema's references do not give");
  refused(R"({"type":"object","properties":{"a":{"$ref":"#/properties/b"}}})", "neither a definition nor");
  refused(R"({"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"integer"}]}}})",
          "anyOf of 2 types");
  refused(R"({"type":"string"})", "root is not an object");
  refused(R"({"type":"object","properties":{"a.b":{"type":"string"}}})", "property named 'a.b'");
  // Each definition names the next three times: 3^12 fields from a kilobyte, 25 levels deep.
  std::string defs;
  for (int k = 0; k < 12; ++k) {
    defs += fmt::format(
        R"({}"d{}":{{"type":"object","properties":{{"x":{{"$ref":"#/$defs/d{}"}},"y":{{"$ref":"#/$defs/d{}"}},"z":{{"$ref":"#/$defs/d{}"}}}}}})",
        k ? "," : "", k, k + 1, k + 1, k + 1);
  }
  defs += R"(,"d12":{"type":"string"})";
  refused(R"({"type":"object","properties":{"top":{"$ref":"#/$defs/d0"}},"$defs":{)" + defs + "}}",
          "more than 10000 fields");
  refused("not json", "not JSON");
}

TEST(JsonSchemaValue, CompactValuesComeBackByteForByte) {
  auto s = JsonSchemaValue::Make(kOrder, 100);
  ASSERT_TRUE(s.ok());
  const std::vector<std::string> values = {
      Framed(7, R"({"id":1,"customer":"ada","total":12.5,"paid":true,"items":[{"sku":"a","qty":2}],"note":null})"),
      Framed(7, R"({"id":2,"customer":null,"total":0.0,"paid":false,"items":[],"note":"caf\u00e9"})"),
  };
  auto arr = Decode(**s, values);
  ASSERT_EQ(arr->length(), 2);
  std::string out;
  StructFields fields;  // one per column, across its rows (as the record reader keeps it)
  ASSERT_TRUE((*s)->EncodeFramed(*arr, 0, 7, &out, &fields).ok());
  EXPECT_EQ(out, values[0]);
  out.clear();
  ASSERT_TRUE((*s)->EncodeFramed(*arr, 1, 7, &out, &fields).ok());
  // The same value; JSON's escapes are not kept (the archive keeps such bytes in value_raw).
  EXPECT_EQ(out, Framed(7, "{\"id\":2,\"customer\":null,\"total\":0.0,\"paid\":false,\"items\":[],\"note\":\"caf\xC3\xA9\"}"));
}

TEST(JsonSchemaValue, LargeListsAsPyarrowWritesThemEncodeAlike) {
  auto s = JsonSchemaValue::Make(R"({"type":"object","properties":{"id":{"type":"integer"},
      "tags":{"type":"array","items":{"type":"string"}}}})", 1);
  ASSERT_TRUE(s.ok());
  arrow::Int64Builder ids;
  ASSERT_TRUE(ids.AppendValues({7, 8}).ok());
  arrow::StringBuilder tags;
  ASSERT_TRUE(tags.AppendValues({"a", "b", "c"}).ok());
  std::shared_ptr<arrow::Array> id_arr, tag_values;
  ASSERT_TRUE(ids.Finish(&id_arr).ok() && tags.Finish(&tag_values).ok());
  arrow::Int64Builder offsets;
  ASSERT_TRUE(offsets.AppendValues({0, 2, 3}).ok());
  std::shared_ptr<arrow::Array> off;
  ASSERT_TRUE(offsets.Finish(&off).ok());
  auto large = arrow::LargeListArray::FromArrays(*off, *tag_values);
  ASSERT_TRUE(large.ok());
  auto arr = arrow::StructArray::Make({id_arr, *large}, std::vector<std::string>{"id", "tags"});
  ASSERT_TRUE(arr.ok());
  std::string out;
  ASSERT_TRUE((*s)->EncodeFramed(**arr, 0, 2, &out, nullptr).ok());
  EXPECT_EQ(out, Framed(2, R"({"id":7,"tags":["a","b"]})"));
  out.clear();
  ASSERT_TRUE((*s)->EncodeFramed(**arr, 1, 2, &out, nullptr).ok());
  EXPECT_EQ(out, Framed(2, R"({"id":8,"tags":["c"]})"));
  // A struct without a field the writer schema names is not encoded as something else.
  auto only_id = arrow::StructArray::Make({id_arr}, std::vector<std::string>{"id"});
  ASSERT_TRUE(only_id.ok());
  out.clear();
  EXPECT_FALSE((*s)->EncodeFramed(**only_id, 0, 2, &out, nullptr).ok());
}

TEST(JsonSchemaValue, SpacedOrReorderedValuesDecodeButDoNotComeBackAlike) {
  auto s = JsonSchemaValue::Make(kOrder, 100);
  ASSERT_TRUE(s.ok());
  const std::string spaced = Framed(1, R"({"total": 3.0, "id": 9, "paid": true})");  // Python's json.dumps
  auto arr = Decode(**s, {spaced});
  std::string out;
  ASSERT_TRUE((*s)->EncodeFramed(*arr, 0, 1, &out, nullptr).ok());
  EXPECT_EQ(out, Framed(1, R"({"id":9,"customer":null,"total":3.0,"paid":true,"items":null,"note":null})"));
  EXPECT_NE(out, spaced);
}

TEST(JsonSchemaValue, NotJsonIsCorruptAndAppendsNothing) {
  auto s = JsonSchemaValue::Make(kOrder, 100);
  ASSERT_TRUE(s.ok());
  auto arrow_type = parquet::ArrowTypeOf(*(*s)->iceberg_type());
  ASSERT_TRUE(arrow_type.ok());
  std::unique_ptr<arrow::ArrayBuilder> b;
  ASSERT_TRUE(arrow::MakeBuilder(arrow::default_memory_pool(), *arrow_type, &b).ok());
  auto* sb = static_cast<arrow::StructBuilder*>(b.get());
  EXPECT_EQ((*s)->DecodeFramed(Framed(1, "[1,2]"), sb).code(), StatusCode::kCorrupt);
  EXPECT_EQ((*s)->DecodeFramed(Framed(1, "{oops"), sb).code(), StatusCode::kCorrupt);
  EXPECT_FALSE((*s)->DecodeFramed("{\"id\":1}", sb).ok());  // no framing
  EXPECT_EQ(b->length(), 0);
}

TEST(JsonSchemaValue, ResolveAndEvolve) {
  auto v1 = JsonSchemaValue::Make(kOrder, 100);
  ASSERT_TRUE(v1.ok());
  const auto table = (*v1)->iceberg_type();
  // v2 adds a top-level field and one inside the items.
  const std::string v2 =
      Replaced(Replaced(kOrder, R"("qty": {"type": "integer"})", R"("qty": {"type": "integer"}, "unit": {"type": "string"})"),
               R"("note": {"oneOf")", R"("channel": {"type": "string"}, "note": {"oneOf")");
  auto r = JsonSchemaValue::Resolve(v2, table);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound) << r.status().ToString();
  int32_t next = 109;
  auto grown = JsonSchemaValue::Evolve(table, v2, &next);
  ASSERT_TRUE(grown.ok()) << grown.status().ToString();
  const auto& g = **grown;
  ASSERT_EQ(g.fields.size(), 7u);
  EXPECT_EQ(g.fields[6].name, "channel");  // at the end of the table's struct
  EXPECT_EQ(g.fields[6].id, 110);  // after items.element.unit (109): the schema's order, depth-first
  const auto& item = *g.fields[4].type->fields[0].type;
  ASSERT_EQ(item.fields.size(), 3u);
  EXPECT_EQ(item.fields[2].name, "unit");
  EXPECT_EQ(item.fields[2].id, 109);
  EXPECT_EQ(next, 111);
  // Both schemas resolve against the grown table; v1's values encode without v2's fields.
  auto r1 = JsonSchemaValue::Resolve(kOrder, *grown);
  auto r2 = JsonSchemaValue::Resolve(v2, *grown);
  ASSERT_TRUE(r1.ok() && r2.ok());
  const std::string value = Framed(3, R"({"id":1,"customer":"a","total":1.0,"paid":true,"items":null,"note":null})");
  auto arr = Decode(**r1, {value});
  std::string out;
  ASSERT_TRUE((*r1)->EncodeFramed(*arr, 0, 3, &out, nullptr).ok());
  EXPECT_EQ(out, value);
  // A type change is refused, naming the field.
  const std::string v3 = Replaced(kOrder, R"("total": {"type": "number"})", R"("total": {"type": "string"})");
  auto bad = JsonSchemaValue::Evolve(table, v3, &next);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'total'"), std::string::npos) << bad.status().message();
}

}  // namespace
}  // namespace thaw::records

namespace thaw::records {
namespace {

TEST(DeriveJsonSchema, DescribesTheJsonThawWrites) {
  using iceberg::NestedField;
  auto prim = [](TypeId id) {
    auto t = std::make_shared<iceberg::Type>();
    t->id = id;
    return iceberg::TypePtr(t);
  };
  auto list = std::make_shared<iceberg::Type>();
  list->id = TypeId::kList;
  list->fields = {NestedField{10, "element", false, prim(TypeId::kString)}};
  auto map = std::make_shared<iceberg::Type>();
  map->id = TypeId::kMap;
  map->fields = {NestedField{11, "key", true, prim(TypeId::kString)}, NestedField{12, "value", true, prim(TypeId::kLong)}};
  iceberg::Type value;
  value.id = TypeId::kStruct;
  value.fields = {NestedField{1, "__raw__", false, prim(TypeId::kBinary)},
                  NestedField{2, "id", true, prim(TypeId::kLong)},
                  NestedField{3, "price", false, prim(TypeId::kDecimal)},
                  NestedField{4, "tags", false, list},
                  NestedField{5, "counts", true, map},
                  NestedField{6, "ok", true, prim(TypeId::kBoolean)}};
  auto text = DeriveJsonSchema(value, "thaw.orders");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  auto j = nlohmann::ordered_json::parse(*text);
  EXPECT_EQ(j["title"], "thaw.orders");
  EXPECT_EQ(j["type"], "object");
  const auto& p = j["properties"];
  EXPECT_FALSE(p.contains("__raw__"));  // writers' internals are not part of the value
  EXPECT_EQ(p["id"], nlohmann::ordered_json::parse(R"({"type":"integer"})"));
  EXPECT_EQ(p["price"], nlohmann::ordered_json::parse(R"({"oneOf":[{"type":"null"},{"type":"string"}]})"));
  EXPECT_EQ(p["tags"]["oneOf"][1]["items"]["oneOf"][1]["type"], "string");
  EXPECT_EQ(p["counts"], nlohmann::ordered_json::parse(R"({"type":"object","additionalProperties":{"type":"integer"}})"));
  EXPECT_EQ(p["ok"]["type"], "boolean");
  // The schema maps back to the kinds of the JSON written for it.
  iceberg::Type flat;
  flat.id = TypeId::kStruct;
  flat.fields = {value.fields[1], value.fields[3], value.fields[5]};
  auto back = JsonSchemaValue::Make(*DeriveJsonSchema(flat, "t"), 1);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ((*back)->iceberg_type()->ToString(), "struct<id: long, tags: list<string>, ok: boolean>");
}

}  // namespace
}  // namespace thaw::records

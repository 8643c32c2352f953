// Schemas with references (records/schema_references.h): a Protobuf file
// importing another, an Avro record using a named type another schema
// defines, both decoded and encoded back byte for byte once the referenced
// texts come first; refused, naming the missing import or name, without
// them; a JSON Schema $ref to another document; and the table property
// that keeps them.
#include "thaw/records/schema_references.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include "test_hex.h"
#include "thaw/records/avro_value.h"
#include "thaw/records/json_schema_value.h"
#include "thaw/records/protobuf_value.h"

namespace thaw::records {
namespace {

using thaw::testing::Hex;
using thaw::testing::Unhex;

constexpr char kCustomerProto[] = R"(syntax = "proto3";
package shop.common;
message Customer { string name = 1; int32 age = 2; }
)";
constexpr char kOrderProto[] = R"(syntax = "proto3";
package shop;
import "shop/common/customer.proto";
import "google/protobuf/timestamp.proto";
message Order { int64 id = 1; shop.common.Customer customer = 2; }
)";

TEST(SchemaReferences, AProtobufImportComesFromTheReferences) {
  const int32_t first[] = {0};
  auto without = ProtobufValueSchema::Make(kOrderProto, first, 1);
  ASSERT_FALSE(without.ok());
  EXPECT_NE(without.status().message().find("shop/common/customer.proto"), std::string::npos)
      << without.status().message();
  EXPECT_NE(without.status().message().find("schema references"), std::string::npos);
  const SchemaReferences refs{{"shop/common/customer.proto", kCustomerProto}};
  auto s = ProtobufValueSchema::Make(kOrderProto, first, 1, refs);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ((*s)->iceberg_type()->ToString(), "struct<id: long, customer: struct<name: string, age: int>>");
  // {id: 7, customer: {name: "a", age: 3}}, framed with id 9 and message index [0].
  const std::string framed = Unhex("0000000009" "00" "0807" "1205" "0a0161" "1003");
  std::unique_ptr<arrow::ArrayBuilder> b;
  ASSERT_TRUE(arrow::MakeBuilder(arrow::default_memory_pool(), (*s)->arrow_type(), &b).ok());
  ASSERT_TRUE((*s)->DecodeFramed(framed, static_cast<arrow::StructBuilder*>(b.get())).ok());
  std::shared_ptr<arrow::Array> a;
  ASSERT_TRUE(b->Finish(&a).ok());
  std::string out;
  ASSERT_TRUE((*s)->EncodeFramed(static_cast<const arrow::StructArray&>(*a), 0, 9, &out, nullptr).ok());
  EXPECT_EQ(Hex(out), Hex(framed));
  // A referenced file that does not parse is named.
  auto bad = ProtobufValueSchema::Make(kOrderProto, first, 1, {{"shop/common/customer.proto", "message {"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("the imported file 'shop/common/customer.proto'"), std::string::npos)
      << bad.status().message();
}

constexpr char kCustomerAvro[] = R"({"type": "record", "name": "Customer", "namespace": "shop",
  "fields": [{"name": "name", "type": "string"}]})";
constexpr char kOrderAvro[] = R"({"type": "record", "name": "Order", "namespace": "shop",
  "fields": [{"name": "id", "type": "long"}, {"name": "customer", "type": "shop.Customer"}]})";

TEST(SchemaReferences, AnAvroNamedTypeComesFromTheReferences) {
  auto without = AvroValueSchema::Make(kOrderAvro, 1);
  ASSERT_FALSE(without.ok());
  EXPECT_NE(without.status().message().find("shop.Customer"), std::string::npos) << without.status().message();
  const SchemaReferences refs{{"shop.Customer", kCustomerAvro}};
  auto s = AvroValueSchema::Make(kOrderAvro, 1, refs);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ((*s)->iceberg_type()->ToString(), "struct<id: long, customer: struct<name: string>>");
  auto resolved = AvroValueSchema::Resolve(kOrderAvro, (*s)->iceberg_type(), refs);
  ASSERT_TRUE(resolved.ok()) << resolved.status().ToString();
  // {id: 7, customer: {name: "a"}}
  const std::string datum = Unhex("0e" "0261");
  auto b = (*resolved)->MakeBuilder();
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE((*resolved)->Decode(datum, false, b->get()).ok());
  std::shared_ptr<arrow::Array> a;
  ASSERT_TRUE((*b)->Finish(&a).ok());
  std::string out;
  ASSERT_TRUE((*resolved)->Encode(static_cast<const arrow::StructArray&>(*a), 0, std::nullopt, &out).ok());
  EXPECT_EQ(Hex(out), Hex(datum));
}

TEST(SchemaReferences, AJsonSchemaRefToAnotherDocumentComesFromTheReferences) {
  constexpr char kMain[] = R"({"type": "object", "properties": {
      "id": {"type": "integer"},
      "customer": {"$ref": "customer.json"},
      "ship_to": {"$ref": "common.json#/$defs/Address"}}})";
  const SchemaReferences refs{
      {"customer.json", R"({"type": "object", "properties": {"name": {"type": "string"},
                             "home": {"$ref": "common.json#/$defs/Address"}}})"},
      {"common.json", R"({"$defs": {"Address": {"type": "object", "properties": {"city": {"type": "string"}}}}})"}};
  auto without = JsonSchemaValue::Make(kMain, 1);
  ASSERT_FALSE(without.ok());
  EXPECT_EQ(without.status().message(),
            "'customer': $ref 'customer.json' points to a document the schema's references do not give");
  auto s = JsonSchemaValue::Make(kMain, 1, refs);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ((*s)->iceberg_type()->ToString(),
            "struct<id: long, customer: struct<name: string, home: struct<city: string>>, ship_to: struct<city: "
            "string>>");
  auto resolved = JsonSchemaValue::Resolve(kMain, (*s)->iceberg_type(), refs);
  EXPECT_TRUE(resolved.ok()) << resolved.status().ToString();
}

TEST(SchemaReferences, TheTablePropertyKeepsThemInOrder) {
  const SchemaReferences refs{{"a.proto", "syntax = \"proto3\";"}, {"b.proto", "import \"a.proto\";"}};
  const std::map<std::string, std::string> props{{ReferencesPropertyKey(12), ReferencesToJson(refs)},
                                                 {"thaw.row.proto-schema.12", "..."}};
  EXPECT_EQ(ReferencesPropertyKey(12), "thaw.row.schema-refs.12");
  auto by_id = ReferencesById(props);
  ASSERT_TRUE(by_id.ok()) << by_id.status().ToString();
  ASSERT_EQ(by_id->size(), 1u);
  EXPECT_EQ(by_id->at(12), refs);
  auto bad = ReferencesById({{"thaw.row.schema-refs.x", "[]"}});
  EXPECT_EQ(bad.status().message(), "table property thaw.row.schema-refs.x: 'x' is not a schema id");
  auto not_json = ReferencesById({{"thaw.row.schema-refs.3", "{\"name\": 1}"}});
  EXPECT_EQ(not_json.status().message(), "table property thaw.row.schema-refs.3: not a JSON array of references");
}

}  // namespace
}  // namespace thaw::records

// Keys read through a schema registry (archive/row_registry.h): a key's
// Avro schema that is not a record decodes as a record of one field `key`
// (the same binary encoding), and records pass through as they are.
#include "thaw/archive/row_registry.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "thaw/records/avro_value.h"

namespace thaw::archive {
namespace {

TEST(AvroKeyRecordTextTest, RecordsAreLeftAsTheyAre) {
  const std::string record = R"({"type":"record","name":"K","namespace":"a.b","fields":[{"name":"id","type":"long"}]})";
  EXPECT_EQ(AvroKeyRecordText(record), record);
  EXPECT_EQ(AvroKeyRecordText("not json"), "not json") << "left for the codec to name what is wrong";
}

TEST(AvroKeyRecordTextTest, OtherSchemasBecomeOneFieldWithoutNamespace) {
  for (const std::string text : {R"("string")", R"({"type":"long","logicalType":"timestamp-millis"})",
                                 R"(["null","string"])", R"("com.acme.Key")"}) {
    auto j = nlohmann::json::parse(AvroKeyRecordText(text));
    EXPECT_EQ(j["type"], "record") << text;
    EXPECT_FALSE(j.contains("namespace")) << "names inside resolve as at the top level: " << text;
    ASSERT_EQ(j["fields"].size(), 1u) << text;
    EXPECT_EQ(j["fields"][0]["name"], "key");
    EXPECT_EQ(j["fields"][0]["type"], nlohmann::json::parse(text));
  }
}

TEST(AvroKeyRecordTextTest, AStringKeyDecodesIntoItsStruct) {
  auto s = records::AvroValueSchema::Make(AvroKeyRecordText(R"("string")"), 200);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const auto& type = (*s)->iceberg_type();
  ASSERT_EQ(type->fields.size(), 1u);
  EXPECT_EQ(type->fields[0].name, "key");
  EXPECT_EQ(type->fields[0].id, 200);
  EXPECT_EQ(type->fields[0].type->id, iceberg::TypeId::kString);
}

TEST(RegistryValueTypeTest, KeyPropertiesHaveTheirOwnNames) {
  RegistryValueType t;
  t.format = "protobuf";
  t.message_name = "shop.Key";
  t.key = true;
  auto p = t.properties();
  EXPECT_EQ(p.at(kKeyFormatKey), "protobuf");
  EXPECT_EQ(p.at(kKeySchemasKey), "registry");
  EXPECT_EQ(p.at(kKeyProtoMessageKey), "shop.Key");
  EXPECT_EQ(p.count(kValueFormatKey), 0u);
  t.key = false;
  EXPECT_EQ(t.properties().at(kValueFormatKey), "protobuf");
  EXPECT_EQ(t.properties().count(kKeyFormatKey), 0u);
}

}  // namespace
}  // namespace thaw::archive

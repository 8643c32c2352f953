#include "thaw/records/layout.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace thaw::records {
namespace {

iceberg::TableMetadata WithSchema(const std::string& fields_json) {
  std::string text = R"({"format-version":2,"table-uuid":"u","location":"/x","last-sequence-number":0,
    "last-updated-ms":0,"last-column-id":99,"current-schema-id":0,
    "schemas":[{"type":"struct","schema-id":0,"fields":)" + fields_json + R"(}],
    "default-spec-id":0,"partition-specs":[{"spec-id":0,"fields":[]}],"last-partition-id":999})";
  auto md = iceberg::TableMetadata::Parse(text, "test");
  EXPECT_TRUE(md.ok()) << md.status().ToString();
  return *md;
}

TEST(Layout, DetectsRedpandaAndMapsNestedColumns) {
  auto md = WithSchema(R"([
    {"id":1,"name":"redpanda","required":true,"type":{"type":"struct","fields":[
      {"id":2,"name":"partition","required":true,"type":"int"},
      {"id":3,"name":"offset","required":true,"type":"long"},
      {"id":4,"name":"timestamp","required":true,"type":"timestamptz"},
      {"id":5,"name":"key","required":false,"type":"binary"}]}},
    {"id":6,"name":"value","required":false,"type":"binary"}])");
  auto l = ResolveLayout(md, md.current_schema(), {});
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->name, "redpanda");
  EXPECT_EQ(l->offset->dotted(), "redpanda.offset");
  EXPECT_EQ(l->offset->ids, (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(l->value->dotted(), "value");
  EXPECT_EQ(l->TopLevelIds(), (std::vector<int32_t>{1, 6}));
}

TEST(Layout, PlainTableSerialisesEveryColumn) {
  auto md = WithSchema(R"([{"id":1,"name":"a","required":false,"type":"int"},
                           {"id":2,"name":"b","required":false,"type":"string"}])");
  auto l = ResolveLayout(md, md.current_schema(), {});
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->name, "plain");
  EXPECT_FALSE(l->offset.has_value());
  EXPECT_EQ(l->value_json.size(), 2u);
}

TEST(Layout, ForcedLayoutWithoutOffsetColumnSaysHowToFixIt) {
  auto md = WithSchema(R"([{"id":1,"name":"a","required":false,"type":"int"}])");
  LayoutOptions o;
  o.forced = "thaw";
  auto l = ResolveLayout(md, md.current_schema(), o);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find("--column offset=COLUMN"), std::string::npos);
  o.forced = "nope";
  auto bad = ResolveLayout(md, md.current_schema(), o);
  EXPECT_NE(bad.status().message().find("valid layouts are thaw, redpanda"), std::string::npos);
}

TEST(Layout, OverridesResolveDottedPathsAndCheckTypes) {
  auto md = WithSchema(R"([{"id":1,"name":"meta","required":true,"type":{"type":"struct","fields":[
      {"id":2,"name":"pos","required":true,"type":"long"},{"id":3,"name":"label","required":true,"type":"string"}]}}])");
  LayoutOptions o;
  o.forced = "thaw";
  ASSERT_TRUE(ParseColumnOverride("offset=meta.pos", &o.column_overrides).ok());
  auto l = ResolveLayout(md, md.current_schema(), o);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->offset->field_id(), 2);
  o.column_overrides["offset"] = "meta.label";
  auto wrong = ResolveLayout(md, md.current_schema(), o);
  EXPECT_NE(wrong.status().message().find("expected int or long"), std::string::npos);
  std::map<std::string, std::string> m;
  EXPECT_FALSE(ParseColumnOverride("offset", &m).ok());
  EXPECT_NE(ParseColumnOverride("colour=x", &m).message().find("unknown Kafka field 'colour'"), std::string::npos);
}

}  // namespace
}  // namespace thaw::records

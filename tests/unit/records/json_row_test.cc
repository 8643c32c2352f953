// Arrow first: its headers define a RETURN_NOT_OK of their own.
#include <arrow/api.h>
#include <arrow/json/from_string.h>

#include "thaw/records/json_row.h"

#include <cmath>
#include <limits>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "thaw/iceberg/table_metadata.h"
#include "thaw/records/layout.h"

namespace thaw::records {
namespace {

std::string Double(double v) {
  std::string s;
  AppendJsonDouble(v, &s);
  return s;
}

std::string Float(float v) {
  std::string s;
  AppendJsonFloat(v, &s);
  return s;
}

// Expected strings are what Java's Double.toString / Float.toString print
// (Kafka Connect's JsonConverter writes numbers through them).
TEST(JsonRow, DoublesAlwaysCarryAPointOrAnExponentAsJavaPrintsThem) {
  EXPECT_EQ(Double(4541.0), "4541.0");
  EXPECT_EQ(Double(-3.0), "-3.0");
  EXPECT_EQ(Double(0.0), "0.0");
  EXPECT_EQ(Double(-0.0), "-0.0");
  EXPECT_EQ(Double(0.1), "0.1");
  EXPECT_EQ(Double(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(Double(0.001), "0.001");
  EXPECT_EQ(Double(0.0001), "1.0E-4");
  EXPECT_EQ(Double(1234567.0), "1234567.0");
  EXPECT_EQ(Double(9999999.5), "9999999.5");
  EXPECT_EQ(Double(1e7), "1.0E7");
  EXPECT_EQ(Double(1.25e20), "1.25E20");
  EXPECT_EQ(Double(-1e-300), "-1.0E-300");
  EXPECT_EQ(Double(123456789.125), "1.23456789125E8");
  EXPECT_EQ(Double(std::numeric_limits<double>::quiet_NaN()), "\"NaN\"");
  EXPECT_EQ(Double(std::numeric_limits<double>::infinity()), "\"Infinity\"");
  EXPECT_EQ(Double(-std::numeric_limits<double>::infinity()), "\"-Infinity\"");
  EXPECT_EQ(Float(0.1f), "0.1");
  EXPECT_EQ(Float(1024.0f), "1024.0");
  EXPECT_EQ(Float(3e10f), "3.0E10");
}

TEST(JsonRow, InitialDefaultsConvertToTheJsonMapping) {
  using iceberg::ParseType;
  auto json_type = [](const char* t) { return *ParseType(nlohmann::json::parse(t)); };
  auto conv = [&](const char* value, const char* type) {
    auto r = DefaultValueJson(value, *json_type(type));
    return r.ok() ? *r : "error: " + r.status().ToString();
  };
  EXPECT_EQ(conv("7", "\"long\""), "7");
  EXPECT_EQ(conv("2", "\"double\""), "2.0");
  EXPECT_EQ(conv("true", "\"boolean\""), "true");
  EXPECT_EQ(conv("\"eu\"", "\"string\""), "\"eu\"");
  EXPECT_EQ(conv("\"14.2\"", "\"decimal(9,2)\""), "\"14.20\"");
  EXPECT_EQ(conv("\"-0.05\"", "\"decimal(9,3)\""), "\"-0.050\"");
  EXPECT_EQ(conv("\"2E+2\"", "\"decimal(9,1)\""), "\"200.0\"");
  EXPECT_EQ(conv("\"000102ff\"", "\"binary\""), "\"AAEC/w==\"");
  EXPECT_EQ(conv("\"F79C3E09-677C-4BBD-A479-3F349CB785E7\"", "\"uuid\""),
            "\"f79c3e09-677c-4bbd-a479-3f349cb785e7\"");
  EXPECT_EQ(conv("[1,2]", R"({"type":"list","element-id":9,"element":"int","element-required":false})"), "[1,2]");
  EXPECT_EQ(conv(R"({"keys":["a","b"],"values":[1,null]})",
                 R"({"type":"map","key-id":9,"key":"string","value-id":10,"value":"int","value-required":false})"),
            R"({"a":1,"b":null})");
  EXPECT_EQ(conv(R"({"keys":[1],"values":["x"]})",
                 R"({"type":"map","key-id":9,"key":"int","value-id":10,"value":"string","value-required":false})"),
            R"([{"key":1,"value":"x"}])");
  // Structs are keyed by field id; fields not given take their own default, else null.
  EXPECT_EQ(conv(R"({"11":"x"})", R"({"type":"struct","fields":[
                   {"id":11,"name":"a","required":false,"type":"string"},
                   {"id":12,"name":"b","required":false,"type":"int","initial-default":5},
                   {"id":13,"name":"c","required":false,"type":"int"}]})"),
            R"({"a":"x","b":5,"c":null})");
  EXPECT_NE(conv("\"x\"", "\"long\"").find("is not a long value"), std::string::npos);
  EXPECT_NE(conv("\"1.234\"", "\"decimal(9,2)\"").find("more than 2 fraction digits"), std::string::npos);
}

// A v3 table whose schema evolved after a data file was written: `name`
// renamed to `full_name` (id 2), `address.zip` (id 5) added, `email` (id 6,
// initial-default "n/a") and `score` (id 7, no default) added.
iceberg::TableMetadata EvolvedTable() {
  std::string text = R"({"format-version":3,"table-uuid":"u","location":"/x","last-sequence-number":0,
    "last-updated-ms":0,"last-column-id":8,"current-schema-id":1,"next-row-id":0,
    "schemas":[{"type":"struct","schema-id":1,"fields":[
      {"id":1,"name":"id","required":true,"type":"long"},
      {"id":2,"name":"full_name","required":false,"type":"string"},
      {"id":3,"name":"address","required":false,"type":{"type":"struct","fields":[
        {"id":4,"name":"city","required":false,"type":"string"},
        {"id":5,"name":"zip","required":false,"type":"string"}]}},
      {"id":6,"name":"email","required":false,"type":"string","initial-default":"n/a"},
      {"id":7,"name":"score","required":false,"type":"double"},
      {"id":8,"name":"amount","required":false,"type":"double"}]}],
    "default-spec-id":0,"partition-specs":[{"spec-id":0,"fields":[]}],"last-partition-id":999})";
  auto md = iceberg::TableMetadata::Parse(text, "test");
  EXPECT_TRUE(md.ok()) << md.status().ToString();
  return *md;
}

std::shared_ptr<arrow::Field> WithId(std::shared_ptr<arrow::Field> f, int id) {
  return f->WithMetadata(arrow::key_value_metadata({"PARQUET:field_id"}, {std::to_string(id)}));
}

TEST(JsonRow, SchemaParsesInitialDefault) {
  auto md = EvolvedTable();
  const auto* email = md.current_schema().FindById(6);
  ASSERT_NE(email, nullptr);
  ASSERT_TRUE(email->initial_default.has_value());
  EXPECT_EQ(*email->initial_default, "\"n/a\"");
  EXPECT_FALSE(md.current_schema().FindById(7)->initial_default.has_value());
}

TEST(JsonRow, RowsAreProjectedOntoTheTableSchemaByFieldId) {
  auto md = EvolvedTable();
  auto layout = ResolveLayout(md, md.current_schema(), {});
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  ASSERT_EQ(layout->name, "plain");

  // The old file: columns in another order, `name` under its old name, no
  // zip/email/score, an extra column the table dropped (id 99), and the
  // integral doubles of `amount`.
  auto city = WithId(arrow::field("city", arrow::utf8()), 4);
  auto addr_type = arrow::struct_({city});
  auto schema = arrow::schema({WithId(arrow::field("amount", arrow::float64()), 8),
                               WithId(arrow::field("name", arrow::utf8()), 2),
                               WithId(arrow::field("dropped", arrow::int32()), 99),
                               WithId(arrow::field("address", addr_type), 3),
                               WithId(arrow::field("id", arrow::int64()), 1)});
  auto arr = [](const std::shared_ptr<arrow::DataType>& t, const char* json) {
    auto a = arrow::json::ArrayFromJSONString(t, json);
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    return *a;
  };
  auto batch = arrow::RecordBatch::Make(
      schema, 2,
      {arr(arrow::float64(), "[4541, 0.5]"), arr(arrow::utf8(), R"(["a", null])"), arr(arrow::int32(), "[1, 2]"),
       arr(addr_type, R"([{"city": "x"}, null])"), arr(arrow::int64(), "[1, 2]")});

  auto builder = JsonRowBuilder::Bind(*layout, *batch);
  ASSERT_TRUE(builder.ok()) << builder.status().ToString();
  std::string row0, row1;
  ASSERT_TRUE(builder->Append(0, &row0));
  ASSERT_TRUE(builder->Append(1, &row1));
  EXPECT_EQ(row0,
            R"({"id":1,"full_name":"a","address":{"city":"x","zip":null},"email":"n/a","score":null,"amount":4541.0})");
  EXPECT_EQ(row1, R"({"id":2,"full_name":null,"address":null,"email":"n/a","score":null,"amount":0.5})");
}

TEST(JsonRow, UnwrappedDecodedStructFollowsTheSchemaWithoutWriterInternals) {
  // Aiven layout: the decoded `value` struct gained `b` after the file was
  // written; `__err__` is a writer internal and stays out.
  std::string text = R"({"format-version":2,"table-uuid":"u","location":"/x","last-sequence-number":0,
    "last-updated-ms":0,"last-column-id":11,"current-schema-id":0,
    "schemas":[{"type":"struct","schema-id":0,"fields":[
      {"id":1,"name":"kafka","required":true,"type":{"type":"struct","fields":[
        {"id":2,"name":"partition","required":true,"type":"int"},
        {"id":3,"name":"offset","required":true,"type":"long"},
        {"id":4,"name":"batch_timestamp_type","required":true,"type":"int"}]}},
      {"id":6,"name":"value_raw","required":false,"type":"binary"},
      {"id":8,"name":"value","required":false,"type":{"type":"struct","fields":[
        {"id":9,"name":"a","required":false,"type":"int"},
        {"id":11,"name":"__err__","required":false,"type":"string"},
        {"id":10,"name":"b","required":false,"type":"string"}]}}]}],
    "default-spec-id":0,"partition-specs":[{"spec-id":0,"fields":[]}],"last-partition-id":999})";
  auto md = iceberg::TableMetadata::Parse(text, "test");
  ASSERT_TRUE(md.ok()) << md.status().ToString();
  auto layout = ResolveLayout(*md, md->current_schema(), {});
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  ASSERT_EQ(layout->name, "aiven");
  ASSERT_TRUE(layout->value_json_unwrap);

  auto value_type = arrow::struct_({WithId(arrow::field("a", arrow::int32()), 9),
                                    WithId(arrow::field("__err__", arrow::utf8()), 11)});
  auto schema = arrow::schema({WithId(arrow::field("value", value_type), 8)});
  auto value = arrow::json::ArrayFromJSONString(value_type, R"([{"a": 1, "__err__": null}, null])");
  ASSERT_TRUE(value.ok()) << value.status().ToString();
  auto batch = arrow::RecordBatch::Make(schema, 2, {*value});
  auto builder = JsonRowBuilder::Bind(*layout, *batch);
  ASSERT_TRUE(builder.ok()) << builder.status().ToString();
  std::string row0, row1;
  ASSERT_TRUE(builder->Append(0, &row0));
  EXPECT_EQ(row0, R"({"a":1,"b":null})");
  EXPECT_FALSE(builder->Append(1, &row1));  // a null struct: a null value
  EXPECT_EQ(row1, "");
}

TEST(JsonRow, BadInitialDefaultFailsLayoutResolutionNamingTheColumn) {
  std::string text = R"({"format-version":3,"table-uuid":"u","location":"/x","last-sequence-number":0,
    "last-updated-ms":0,"last-column-id":2,"current-schema-id":0,"next-row-id":0,
    "schemas":[{"type":"struct","schema-id":0,"fields":[
      {"id":1,"name":"a","required":false,"type":"int"},
      {"id":2,"name":"b","required":false,"type":"int","initial-default":"seven"}]}],
    "default-spec-id":0,"partition-specs":[{"spec-id":0,"fields":[]}],"last-partition-id":999})";
  auto md = iceberg::TableMetadata::Parse(text, "test");
  ASSERT_TRUE(md.ok()) << md.status().ToString();
  auto layout = ResolveLayout(*md, md->current_schema(), {});
  ASSERT_FALSE(layout.ok());
  EXPECT_NE(layout.status().ToString().find("column 'b'"), std::string::npos) << layout.status().ToString();
}

}  // namespace
}  // namespace thaw::records

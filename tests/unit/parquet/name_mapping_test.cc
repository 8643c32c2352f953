// Parquet files without field ids read through a name mapping
// (schema.name-mapping.default): ids reach nested struct fields, list
// elements and map keys/values, columns the mapping leaves out are absent,
// and without a mapping a data file is refused. The file is written here by
// Arrow's own Parquet writer (no field ids).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <arrow/json/from_string.h>
#include <parquet/arrow/writer.h>

#include "thaw/parquet/parquet_file.h"

namespace thaw::pq {
namespace {

std::string WriteIdLessFile() {
  auto entry = arrow::struct_({arrow::field("key", arrow::utf8(), false), arrow::field("value", arrow::binary())});
  auto schema = arrow::schema({
      arrow::field("off", arrow::int64(), false),
      arrow::field("hdrs", arrow::list(arrow::field("element", entry, false))),
      arrow::field("attrs", arrow::map(arrow::utf8(), arrow::int32())),
      arrow::field("extra", arrow::int32()),
  });
  arrow::Int64Builder off;
  EXPECT_TRUE(off.AppendValues({7, 8}).ok());
  auto hdrs = arrow::json::ArrayFromJSONString(schema->field(1)->type(), R"([[{"key": "h", "value": "v"}], null])");
  auto attrs = arrow::json::ArrayFromJSONString(schema->field(2)->type(), R"([[["a", 1]], []])");
  auto extra = arrow::json::ArrayFromJSONString(arrow::int32(), "[1, 2]");
  EXPECT_TRUE(hdrs.ok() && attrs.ok() && extra.ok());
  auto table = arrow::Table::Make(schema, {*off.Finish(), *hdrs, *attrs, *extra});
  const std::string path =
      (std::filesystem::temp_directory_path() / ("thaw_name_mapping_" + std::to_string(getpid()) + ".parquet")).string();
  auto out = arrow::io::FileOutputStream::Open(path);
  EXPECT_TRUE(out.ok());
  EXPECT_TRUE(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), *out, 10).ok());
  EXPECT_TRUE((*out)->Close().ok());
  return path;
}

constexpr char kMapping[] = R"([
  {"field-id": 1, "names": ["offset", "off"]},
  {"field-id": 2, "names": ["hdrs"], "fields": [
    {"field-id": 3, "names": ["element"], "fields": [
      {"field-id": 4, "names": ["key"]}, {"field-id": 5, "names": ["value"]}]}]},
  {"field-id": 6, "names": ["attrs"], "fields": [
    {"field-id": 7, "names": ["key"]}, {"field-id": 8, "names": ["value"]}]}
])";

TEST(NameMappingTest, ParsesAndFindsByAnyName) {
  auto m = iceberg::NameMapping::Parse(kMapping, "test");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->fields().size(), 3u);
  const auto* f = iceberg::NameMapping::Find(m->fields(), "off");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->field_id, 1);
  EXPECT_EQ(iceberg::NameMapping::Find(m->fields(), "extra"), nullptr);
  EXPECT_EQ(iceberg::NameMapping::Find(m->fields()[1].fields[0].fields, "value")->field_id, 5);
  // No field-id: the names map to nothing, but the entry parses.
  auto no_id = iceberg::NameMapping::Parse(R"([{"names": ["x"]}])", "test");
  ASSERT_TRUE(no_id.ok());
  EXPECT_FALSE(no_id->fields()[0].field_id);
  for (const char* bad : {"{}", "[1]", R"([{"field-id": 1}])", R"([{"field-id": "1", "names": ["a"]}])", "[{"}) {
    auto r = iceberg::NameMapping::Parse(bad, "property of t");
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("name mapping property of t"), std::string::npos) << r.status().ToString();
  }
}

TEST(NameMappingTest, GivesIdsToAnIdLessFile) {
  const std::string path = WriteIdLessFile();
  storage::LocalFileIO io;
  auto mapping = iceberg::NameMapping::Parse(kMapping, "test");
  ASSERT_TRUE(mapping.ok());
  auto pf = ParquetFile::OpenDataFile(io, path, std::make_shared<const iceberg::NameMapping>(std::move(*mapping)));
  ASSERT_TRUE(pf.ok()) << pf.status().ToString();
  EXPECT_TRUE((*pf)->name_mapped());
  EXPECT_EQ((*pf)->TopLevelField(1, "renamed_offset"), 0);  // by id, whatever the schema calls it now
  EXPECT_EQ((*pf)->TopLevelField(6, "attrs"), 2);
  EXPECT_EQ((*pf)->TopLevelField(9, "extra"), -1);  // not in the mapping: absent, not found by name
  EXPECT_GE((*pf)->LeafColumn({{2, "hdrs"}, {3, "element"}, {5, "value"}}), 0);

  auto reader = (*pf)->Read({0}, {0, 1, 2}, 100);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  std::shared_ptr<arrow::RecordBatch> batch;
  ASSERT_TRUE((*reader)->ReadNext(&batch).ok());
  ASSERT_NE(batch, nullptr);
  ASSERT_TRUE(batch->ValidateFull().ok());
  EXPECT_EQ(FieldIdOf(*batch->schema()->field(0)), 1);
  EXPECT_EQ(FieldIdOf(*batch->schema()->field(1)), 2);
  const auto& list = static_cast<const arrow::ListType&>(*batch->column(1)->type());
  EXPECT_EQ(FieldIdOf(*list.value_field()), 3);
  EXPECT_EQ(FieldIdOf(*list.value_type()->field(0)), 4);
  EXPECT_EQ(FieldIdOf(*list.value_type()->field(1)), 5);
  const auto& map = static_cast<const arrow::MapType&>(*batch->column(2)->type());
  EXPECT_EQ(FieldIdOf(*batch->schema()->field(2)), 6);
  EXPECT_EQ(FieldIdOf(*map.key_field()), 7);
  EXPECT_EQ(FieldIdOf(*map.item_field()), 8);
  EXPECT_EQ(batch->column(0)->ToString(), arrow::json::ArrayFromJSONString(arrow::int64(), "[7, 8]").ValueOrDie()->ToString());

  // Clones keep the mapping.
  auto clone = (*pf)->Clone(io);
  ASSERT_TRUE(clone.ok());
  EXPECT_EQ((*clone)->TopLevelField(1, "x"), 0);

  // Without a mapping a data file without ids is refused, naming it.
  auto refused = ParquetFile::OpenDataFile(io, path, nullptr);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(path), std::string::npos);
  EXPECT_NE(refused.status().message().find("schema.name-mapping.default"), std::string::npos);
  // Other files (delete files) still open and match by name.
  auto plain = ParquetFile::Open(io, path);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ((*plain)->TopLevelField(1, "extra"), 3);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace thaw::pq

// Avro values in the row layout (archive/row_avro.h): the decode + re-encode
// check that decides value_raw, and a row-layout data file written by
// DataFileWriter::AppendDecoded read back from Parquet the way Thaw's reader
// reads it (layout thaw-row with thaw.row.value-format=avro: value_raw, else
// the value struct re-encoded by AvroValueSchema::Encode) -- every value must
// come back byte for byte, for every type of the all-types schema.
#include "thaw/archive/row_avro.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "test_hex.h"
#include "thaw/parquet/parquet_file.h"
#include "thaw/records/layout.h"
#include "thaw/storage/file_io.h"

namespace thaw::archive {
namespace {

namespace fs = std::filesystem;

std::string Resource(const std::string& name) {
  std::ifstream in(fs::path(THAW_SOURCE_DIR) / "tests/unit/records/resources" / name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Framed(int32_t id, const std::string& datum) {
  std::string out(1, '\0');
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((id >> shift) & 0xff));
  return out + datum;
}

// Values (Confluent-framed, schema id 7) and whether value_raw must keep them.
std::vector<std::pair<std::optional<std::string>, bool>> Cases() {
  std::vector<std::pair<std::optional<std::string>, bool>> cases;
  std::istringstream lines(Resource("avro_value_java.hex"));
  std::vector<std::string> java;
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) java.push_back(thaw::testing::Unhex(line));
  }
  for (const auto& d : java) cases.emplace_back(Framed(7, d), false);  // written by Apache Avro Java
  cases.emplace_back(std::nullopt, false);                             // tombstone
  cases.emplace_back(Framed(8, java[0]), true);                        // another schema id
  cases.emplace_back(java[0], true);                                   // not framed
  cases.emplace_back(Framed(7, java[1]) + "x", true);                  // a byte after the datum
  cases.emplace_back(Framed(7, java[2].substr(0, 20)), true);          // truncated
  return cases;
}

records::RecordBatch BatchOf(const std::vector<std::pair<std::optional<std::string>, bool>>& cases) {
  records::RecordBatch b;
  int64_t off = 0;
  for (const auto& [v, raw] : cases) {
    records::Record r;
    r.partition = 0;
    r.offset = off++;
    r.timestamp_ms = 1700000000000 + r.offset;
    if (v) r.value = std::string_view(*v);
    b.records.push_back(r);
  }
  return b;
}

TEST(RowAvroTest, WrittenFileReadsBackByteForByteThroughParquet) {
  const std::string avsc = Resource("avro_value_all_types.avsc");
  auto avro = records::AvroValueSchema::Make(avsc, kFirstValueFieldId);
  ASSERT_TRUE(avro.ok()) << avro.status().ToString();
  const auto cases = Cases();
  const auto batch = BatchOf(cases);

  char tmpl[] = "/tmp/thaw_row_avro_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const fs::path dir = tmpl;
  storage::LocalFileIO io;
  auto schema = iceberg::Schema::FromJson(nlohmann::json::parse(RowSchemaJson(false, *(*avro)->iceberg_type())));
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  const std::string location = (dir / "row.parquet").string();
  auto w = parquet::DataFileWriter::Make(io, location, *schema, 0, {}, {});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto dec = RowValueDecoder::Make(MakeAvroValueCodec(*avro, 7));
  ASSERT_TRUE(dec.ok()) << dec.status().ToString();
  for (size_t i = 0; i < cases.size(); i += 3) {
    const size_t end = std::min(cases.size(), i + 3);
    auto decoded = (*dec)->Decode(batch, i, end);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    for (size_t k = i; k < end; ++k) EXPECT_EQ(decoded->keep_raw[k - i], cases[k].second) << "value " << k;
    auto st = (*w)->AppendDecoded(batch, i, end, *decoded);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  EXPECT_EQ((*dec)->counts().decoded, 4);
  EXPECT_EQ((*dec)->counts().undecodable, 4);
  auto df = (*w)->Finish();
  ASSERT_TRUE(df.ok()) << df.status().ToString();

  // Read back as the reader does: Parquet's Arrow types, then Encode.
  auto file = pq::ParquetFile::Open(io, location);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  iceberg::TableMetadata md;
  md.properties["thaw.layout"] = kRowLayoutValue;
  md.properties[kValueFormatKey] = "avro";
  md.properties[kAvroSchemaKey] = avsc;
  md.properties[kAvroSchemaIdKey] = "7";
  auto layout = records::ResolveLayout(md, *schema, {});
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  ASSERT_NE(layout->value_avro, nullptr);
  EXPECT_EQ(layout->value_avro_schema_id, 7);
  std::vector<int> groups, cols;
  for (int g = 0; g < (*file)->num_row_groups(); ++g) groups.push_back(g);
  for (int32_t id : {2, kValueRawFieldId, kValueFieldId}) cols.push_back((*file)->TopLevelField(id, ""));
  auto reader = (*file)->Read(groups, cols, 1024);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  size_t n = 0;
  while (true) {
    std::shared_ptr<arrow::RecordBatch> rb;
    ASSERT_TRUE((*reader)->ReadNext(&rb).ok());
    if (!rb) break;
    const auto& raw = static_cast<const arrow::BinaryArray&>(*rb->column(1));
    const auto& value = static_cast<const arrow::StructArray&>(*rb->column(2));
    for (int64_t r = 0; r < rb->num_rows(); ++r, ++n) {
      ASSERT_LT(n, cases.size());
      const auto& [want, want_raw] = cases[n];
      EXPECT_EQ(!raw.IsNull(r), want_raw) << n;
      std::optional<std::string> got;
      if (!raw.IsNull(r)) {
        got = raw.GetString(r);
      } else if (!value.IsNull(r)) {
        std::string s;
        auto st = layout->value_avro->Encode(value, r, layout->value_avro_schema_id, &s);
        ASSERT_TRUE(st.ok()) << st.ToString();
        got = s;
      }
      EXPECT_EQ(got, want) << "record " << n;
    }
  }
  EXPECT_EQ(n, cases.size());

  // A table whose value struct is not the schema's mapping is refused.
  md.properties[kAvroSchemaKey] = R"({"type": "record", "name": "R", "fields": [{"name": "id", "type": "int"}]})";
  auto wrong = records::ResolveLayout(md, *schema, {});
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().message(), "thaw.row.avro-schema: the value column 'value' is " +
                                          (*avro)->iceberg_type()->ToString() +
                                          " where the Avro schema gives struct<id: int> (field count differs)");
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace thaw::archive

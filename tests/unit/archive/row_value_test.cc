// The row layout's values (archive/row_value.h): JSON schema inference, the
// decode + re-encode check that decides value_raw, and a row-layout data
// file written by DataFileWriter::AppendDecoded read back the way Thaw's
// reader reads it (layout thaw-row: value_raw, else the value struct through
// JsonRowBuilder) -- every value must come back byte for byte.
#include "thaw/archive/row_value.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "thaw/parquet/parquet_file.h"
#include "thaw/records/json_row.h"
#include "thaw/records/layout.h"
#include "thaw/storage/file_io.h"

namespace thaw::archive {
namespace {

namespace fs = std::filesystem;
using iceberg::TypeId;

iceberg::TypePtr Infer(const std::vector<std::string>& values) {
  std::vector<std::string_view> views(values.begin(), values.end());
  auto t = InferJsonValueType(views);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : nullptr;
}

TEST(InferJsonValueTypeTest, TypesOrderAndIds) {
  auto t = Infer({
      R"({"id":1,"name":"a","price":1,"ok":true,"tags":["x"],"addr":{"city":"P","zip":7},"none":null,"e":[]})",
      R"({"id":2,"price":2.5,"mixed":1,"late":"x","addr":{"city":"Q","geo":[1.5,2]},"e":[],"__internal":3})",
      R"({"mixed":"one","obj_or_list":{"a":1}})",
      R"({"obj_or_list":[1],"empty":{}})",
      R"(not json)",
      R"([1,2,3])",
  });
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->ToString(),
            "struct<id: long, name: string, price: double, ok: boolean, tags: list<string>, "
            "addr: struct<city: string, zip: long, geo: list<double>>, none: string, e: list<string>, "
            "mixed: string, late: string, obj_or_list: string, empty: string>");
  // Ids depth-first from 100 (a list's element right after its list), all optional.
  std::string ids;
  std::function<void(const iceberg::Type&)> walk = [&](const iceberg::Type& type) {
    for (const auto& f : type.fields) {
      ids += std::to_string(f.id) + ":" + f.name + (f.required ? "!" : "") + " ";
      walk(*f.type);
    }
  };
  walk(*t);
  EXPECT_EQ(ids,
            "100:id 101:name 102:price 103:ok 104:tags 105:element 106:addr 107:city 108:zip 109:geo 110:element "
            "111:none 112:e 113:element 114:mixed 115:late 116:obj_or_list 117:empty ");
}

TEST(InferJsonValueTypeTest, NoObjectIsAnError) {
  std::vector<std::string_view> v = {"1", "\"s\"", "{}", "not json"};
  auto t = InferJsonValueType(v);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
  EXPECT_NE(t.status().message().find("--layout thaw"), std::string::npos) << t.status().message();
}

TEST(JsonValueCodecTest, RefusesTypesItCannotFill) {
  auto s = iceberg::Schema::FromJson(
      nlohmann::json::parse(R"({"type":"struct","fields":[{"id":100,"name":"d","required":false,"type":"date"}]})"));
  ASSERT_TRUE(s.ok());
  auto c = MakeJsonValueCodec(s->root());
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("'d' has type date"), std::string::npos) << c.status().message();
}

struct Rec {
  int64_t offset;
  std::optional<std::string> value;
  std::optional<std::string> key = std::nullopt;
};

records::RecordBatch BatchOf(const std::vector<Rec>& recs) {
  records::RecordBatch b;
  for (const auto& r : recs) {
    records::Record out;
    out.partition = 0;
    out.offset = r.offset;
    out.timestamp_ms = 1700000000000 + r.offset;
    if (r.value) out.value = std::string_view(*r.value);
    if (r.key) out.key = std::string_view(*r.key);
    b.records.push_back(out);
  }
  return b;
}

// Values and whether value_raw must keep them.
const std::vector<std::pair<std::optional<std::string>, bool>>& Cases() {
  static const std::vector<std::pair<std::optional<std::string>, bool>> kCases = {
      {R"({"id":1,"name":"a","score":1.5,"tags":["x","y"],"addr":{"city":"P","zip":75001},"ok":true})", false},
      {R"({"id":2,"name":null,"score":-0.25,"tags":[],"addr":null,"ok":false})", false},
      {R"({ "id": 3, "name": "spaced", "score": 2.0, "tags": null, "addr": null, "ok": null })", true},  // whitespace
      {R"({"id":4,"name":"missing fields"})", true},  // the reader writes the absent ones as null
      {std::nullopt, false},                          // tombstone: both columns null
      {"not json at all", true},                      // undecodable: raw only
      {"[1,2]", true},                                // JSON, not an object
      {R"({"id":"five","name":"wrong type","score":1.0,"tags":[],"addr":null,"ok":true})", true},
      {R"({"id":6,"name":"extra","score":1.0,"tags":[],"addr":null,"ok":true,"new":1})", true},
      {R"({"id":7,"name":"exp","score":1e3,"tags":[],"addr":null,"ok":true})", true},        // re-encodes as 1000.0
      {R"({"name":"order","id":8,"score":1.0,"tags":[],"addr":null,"ok":true})", true},      // key order differs
      {R"({"id":9,"name":"caf\u00e9","score":1.0,"tags":[],"addr":null,"ok":true})", true},  // escape re-encodes as é
      {R"({"id":10,"name":"café \"q\"\n","score":0.001,"tags":["a"],"addr":{"city":null,"zip":1},"ok":true})", false},
  };
  return kCases;
}

std::vector<Rec> CaseRecords() {
  std::vector<Rec> recs;
  int64_t off = 0;
  for (const auto& [v, raw] : Cases()) recs.push_back({off++, v});
  return recs;
}

iceberg::TypePtr CaseType() {
  return Infer({R"({"id":1,"name":"a","score":1.5,"tags":["x","y"],"addr":{"city":"P","zip":75001},"ok":true})"});
}

TEST(RowValueDecoderTest, KeepsRawExactlyWhenReencodingDiffers) {
  auto codec = MakeJsonValueCodec(CaseType());
  ASSERT_TRUE(codec.ok()) << codec.status().ToString();
  auto dec = RowValueDecoder::Make(std::move(*codec));
  ASSERT_TRUE(dec.ok()) << dec.status().ToString();
  const auto recs = CaseRecords();
  const auto batch = BatchOf(recs);
  // Two calls: the builder is reused.
  auto first = (*dec)->Decode(batch, 0, 5);
  auto second = (*dec)->Decode(batch, 5, recs.size());
  ASSERT_TRUE(first.ok() && second.ok());
  std::vector<bool> raw = first->keep_raw;
  raw.insert(raw.end(), second->keep_raw.begin(), second->keep_raw.end());
  ASSERT_EQ(raw.size(), Cases().size());
  for (size_t i = 0; i < raw.size(); ++i) {
    EXPECT_EQ(raw[i], Cases()[i].second) << "value " << i << ": " << Cases()[i].first.value_or("(null)");
  }
  EXPECT_EQ(first->values->length(), 5);
  EXPECT_EQ(second->values->length(), static_cast<int64_t>(recs.size() - 5));
  // Tombstone and undecodable values are null structs; the rest decoded, as far as they fit.
  EXPECT_TRUE(first->values->IsNull(4));
  EXPECT_TRUE(second->values->IsNull(0));  // "not json at all"
  EXPECT_TRUE(second->values->IsNull(1));  // [1,2]
  const auto& wrong = static_cast<const arrow::StructArray&>(*second->values);
  EXPECT_FALSE(wrong.IsNull(2));
  EXPECT_TRUE(wrong.field(0)->IsNull(2)) << "id \"five\" does not fit a long";
  EXPECT_EQ(static_cast<const arrow::StringArray&>(*wrong.field(1)).GetString(2), "wrong type");
  EXPECT_EQ((*dec)->counts().undecodable, 2);
  EXPECT_EQ((*dec)->counts().decoded, static_cast<int64_t>(Cases().size()) - 3);
  int64_t kept = 0;
  for (bool r : raw) kept += r;
  EXPECT_EQ((*dec)->counts().kept_raw, kept);
}

TEST(RowSchemaJsonTest, CanonicalColumnsValueRawAndValue) {
  auto s = iceberg::Schema::FromJson(nlohmann::json::parse(RowSchemaJson(true, *CaseType())));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_NE(s->FindById(kValueRawFieldId), nullptr);
  EXPECT_EQ(s->FindById(kValueRawFieldId)->name, "value_raw");
  EXPECT_EQ(s->FindById(kValueRawFieldId)->type->id, TypeId::kBinary);
  ASSERT_NE(s->FindById(kValueFieldId), nullptr);
  EXPECT_EQ(s->FindById(kValueFieldId)->name, "value");
  EXPECT_FALSE(s->FindById(kValueFieldId)->required);
  EXPECT_EQ(s->FindById(11)->name, "kafka_topic");
  EXPECT_EQ(s->FindById(100)->name, "id");
  for (int id : {1, 2, 3, 4, 5, 7, 8, 9, 10}) EXPECT_NE(s->FindById(id), nullptr) << id;
}

// A key struct {region: string, n: long} with ids after CaseType()'s.
iceberg::TypePtr KeyType() {
  auto s = iceberg::Schema::FromJson(nlohmann::json::parse(
      R"({"type":"struct","schema-id":0,"fields":[{"id":1,"name":"k","required":false,"type":{"type":"struct","fields":[)"
      R"({"id":200,"name":"region","required":false,"type":"string"},{"id":201,"name":"n","required":false,"type":"long"}]}}]})"));
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? s->FindById(1)->type : nullptr;
}

TEST(RowSchemaJsonTest, DecodedKeyColumnsWhenAKeyTypeIsGiven) {
  auto key = KeyType();
  auto s = iceberg::Schema::FromJson(nlohmann::json::parse(RowSchemaJson(false, *CaseType(), true, 3, key.get())));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_NE(s->FindById(kKeyDecodedFieldId), nullptr);
  EXPECT_EQ(s->FindById(kKeyDecodedFieldId)->name, "key_decoded");
  EXPECT_FALSE(s->FindById(kKeyDecodedFieldId)->required);
  EXPECT_EQ(s->FindById(kKeyDecodedFieldId)->type->ToString(), key->ToString());
  ASSERT_NE(s->FindById(kKeySchemaIdFieldId), nullptr);
  EXPECT_EQ(s->FindById(kKeySchemaIdFieldId)->name, "key_schema_id");
  EXPECT_EQ(s->FindById(kKeySchemaIdFieldId)->type->id, TypeId::kInt);
  EXPECT_EQ(s->FindById(5)->name, "key") << "the key's bytes stay";
  EXPECT_EQ(s->schema_id(), 3);
  EXPECT_EQ(s->FindById(200)->name, "region");
  EXPECT_EQ(s->FindById(100)->name, "id") << "the value's fields keep theirs";
  auto without = iceberg::Schema::FromJson(nlohmann::json::parse(RowSchemaJson(false, *CaseType())));
  ASSERT_TRUE(without.ok());
  EXPECT_EQ(without->FindById(kKeyDecodedFieldId), nullptr);
}

TEST(RowValueDecoderTest, DecodesKeysBesideValues) {
  auto key_type = KeyType();
  auto codec = MakeJsonValueCodec(CaseType());
  auto key_codec = MakeJsonValueCodec(key_type);
  ASSERT_TRUE(codec.ok() && key_codec.ok());
  auto dec = RowValueDecoder::Make(std::move(*codec), std::move(*key_codec));
  ASSERT_TRUE(dec.ok()) << dec.status().ToString();
  const std::vector<Rec> recs = {{0, R"({"id":1})", R"({"region":"us","n":7})"},
                                 {1, R"({"id":2})", std::nullopt},
                                 {2, R"({"id":3})", "not json"}};
  const auto batch = BatchOf(recs);
  auto out = (*dec)->Decode(batch, 0, recs.size());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_NE(out->keys, nullptr);
  ASSERT_EQ(out->keys->length(), 3);
  EXPECT_FALSE(out->keys->IsNull(0));
  EXPECT_TRUE(out->keys->IsNull(1)) << "a null key";
  EXPECT_TRUE(out->keys->IsNull(2)) << "a key that does not decode";
  const auto& k = static_cast<const arrow::StructArray&>(*out->keys);
  EXPECT_EQ(static_cast<const arrow::StringArray&>(*k.field(0)).GetString(0), "us");
  EXPECT_EQ(out->key_schema_ids.size(), 3u) << "one per record (JSON keys have no id)";
  EXPECT_EQ((*dec)->counts().keys_decoded, 1);
  EXPECT_EQ((*dec)->counts().keys_undecodable, 1);
}

TEST(RowLayoutTest, DetectedByPropertyOrShape) {
  auto s = iceberg::Schema::FromJson(nlohmann::json::parse(RowSchemaJson(false, *CaseType())));
  ASSERT_TRUE(s.ok());
  iceberg::TableMetadata md;
  auto by_shape = records::ResolveLayout(md, *s, {});
  ASSERT_TRUE(by_shape.ok()) << by_shape.status().ToString();
  EXPECT_EQ(by_shape->name, "thaw-row");
  md.properties["thaw.layout"] = kRowLayoutValue;
  auto l = records::ResolveLayout(md, *s, {});
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->name, "thaw-row");
  ASSERT_TRUE(l->value);
  EXPECT_EQ(l->value->dotted(), "value_raw");
  ASSERT_EQ(l->value_json.size(), 1u);
  EXPECT_EQ(l->value_json[0].field_id(), kValueFieldId);
  EXPECT_TRUE(l->value_json_unwrap);
  EXPECT_TRUE(l->notes.empty());
  // The canonical schema stays "thaw".
  auto c = iceberg::Schema::FromJson(nlohmann::json::parse(parquet::CanonicalSchemaJson(false)));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(records::ResolveLayout(iceberg::TableMetadata{}, *c, {})->name, "thaw");
}

TEST(RowLayoutTest, WrittenFileReadsBackByteForByte) {
  char tmpl[] = "/tmp/thaw_row_value_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const fs::path dir = tmpl;
  storage::LocalFileIO io;
  auto schema = iceberg::Schema::FromJson(nlohmann::json::parse(RowSchemaJson(false, *CaseType())));
  ASSERT_TRUE(schema.ok());
  const std::string location = (dir / "row.parquet").string();
  parquet::DataFileWriterOptions wo;
  wo.row_group_bytes = 300;  // several row groups
  auto w = parquet::DataFileWriter::Make(io, location, *schema, 0, {}, wo);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto codec = MakeJsonValueCodec(CaseType());
  ASSERT_TRUE(codec.ok());
  auto dec = RowValueDecoder::Make(std::move(*codec));
  ASSERT_TRUE(dec.ok());
  const auto recs = CaseRecords();
  const auto batch = BatchOf(recs);
  for (size_t i = 0; i < recs.size(); i += 4) {
    const size_t end = std::min(recs.size(), i + 4);
    auto decoded = (*dec)->Decode(batch, i, end);
    ASSERT_TRUE(decoded.ok());
    auto st = (*w)->AppendDecoded(batch, i, end, *decoded);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  auto df = (*w)->Finish();
  ASSERT_TRUE(df.ok()) << df.status().ToString();
  EXPECT_EQ(df->record_count, static_cast<int64_t>(recs.size()));
  // Counts for the value's leaves as for every column: id (100), tags' element (104), addr.city/zip (106, 107).
  int64_t raw_count = 0, null_structs = 0;
  for (const auto& [v, raw] : Cases()) raw_count += raw;
  for (size_t i = 0; i < Cases().size(); ++i) null_structs += (!Cases()[i].first || i == 5 || i == 6);
  EXPECT_EQ(df->value_counts.at(kValueRawFieldId), static_cast<int64_t>(recs.size()));
  EXPECT_EQ(df->null_value_counts.at(kValueRawFieldId), static_cast<int64_t>(recs.size()) - raw_count);
  EXPECT_EQ(df->value_counts.at(100), static_cast<int64_t>(recs.size()));
  EXPECT_GT(df->column_sizes.at(100), 0);
  EXPECT_EQ(df->null_value_counts.at(100), null_structs + 1) << "null structs, and id \"five\"";
  EXPECT_TRUE(df->value_counts.count(104));
  EXPECT_TRUE(df->value_counts.count(106));
  EXPECT_TRUE(df->value_counts.count(107));
  EXPECT_FALSE(df->value_counts.count(105)) << "addr is a struct, not a leaf";

  // Read back as the reader does.
  auto file = pq::ParquetFile::Open(io, location);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_GT((*file)->num_row_groups(), 1);
  iceberg::TableMetadata md;
  md.properties["thaw.layout"] = kRowLayoutValue;
  auto layout = records::ResolveLayout(md, *schema, {});
  ASSERT_TRUE(layout.ok());
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
    auto json = records::JsonRowBuilder::Bind(*layout, *rb);
    ASSERT_TRUE(json.ok()) << json.status().ToString();
    const auto& offsets = static_cast<const arrow::Int64Array&>(*rb->column(0));
    const auto& raw = static_cast<const arrow::BinaryArray&>(*rb->column(1));
    for (int64_t r = 0; r < rb->num_rows(); ++r, ++n) {
      ASSERT_LT(n, Cases().size());
      EXPECT_EQ(offsets.Value(r), static_cast<int64_t>(n));
      const auto& [want, want_raw] = Cases()[n];
      EXPECT_EQ(!raw.IsNull(r), want_raw) << n;
      std::optional<std::string> got;
      if (!raw.IsNull(r)) {
        got = raw.GetString(r);
      } else {
        std::string s;
        if (json->Append(r, &s)) got = s;
      }
      EXPECT_EQ(got, want) << "record " << n;
    }
  }
  EXPECT_EQ(n, Cases().size());
  std::error_code ec;
  fs::remove_all(dir, ec);
}

TEST(RowLayoutTest, CanonicalWriterRefusesDecodedValuesWithoutTheColumn) {
  char tmpl[] = "/tmp/thaw_row_value_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  storage::LocalFileIO io;
  auto schema = iceberg::Schema::FromJson(nlohmann::json::parse(parquet::CanonicalSchemaJson(false)));
  auto w = parquet::DataFileWriter::Make(io, std::string(tmpl) + "/c.parquet", *schema, 0, {});
  ASSERT_TRUE(w.ok());
  std::vector<Rec> recs = {{0, R"({"a":1})"}};
  auto batch = BatchOf(recs);
  parquet::DecodedValues none;
  auto st = (*w)->AppendDecoded(batch, 0, 1, none);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("no value struct column"), std::string::npos) << st.message();
  (*w)->Abort();
  std::error_code ec;
  fs::remove_all(tmpl, ec);
}

}  // namespace
}  // namespace thaw::archive

// Manifests and manifest lists written by WriteManifest / WriteManifestList:
// read back by Thaw's own reader (inheritance applied), checked field by
// field against the Avro schemas and header keys Iceberg Java writes, and
// read by pyiceberg (set THAW_PYTHON to a python with pyiceberg), whose scan
// planning must prune by the partition summaries and column bounds written.
#include "thaw/iceberg/manifest_writer.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "thaw/iceberg/avro/avro.h"
#include "thaw/iceberg/manifest.h"
#include "thaw/iceberg/manifest_merge.h"
#include "thaw/iceberg/schema_json.h"

namespace thaw::iceberg {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// ------------------------------------------------------------------ helpers

Datum Int(int64_t v) { return Datum{Datum::kInt, v, 0, {}}; }
Datum Dbl(double v) { return Datum{Datum::kDouble, 0, v, {}}; }
Datum Str(std::string v) { return Datum{Datum::kBytes, 0, 0, std::move(v)}; }
Datum Null() { return Datum{}; }

std::string DoubleBytes(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  return EncodeLongBound(static_cast<int64_t>(bits));
}

std::string Hex(const std::string& s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(d[c >> 4]);
    out.push_back(d[c & 15]);
  }
  return out;
}

// The canonical Kafka layout (docs/layouts.md), partitioned by kafka_partition.
json CanonicalSchema() {
  return json::parse(R"({"type":"struct","schema-id":0,"fields":[
    {"id":1,"name":"kafka_partition","required":true,"type":"int"},
    {"id":2,"name":"kafka_offset","required":true,"type":"long"},
    {"id":3,"name":"kafka_timestamp","required":true,"type":"timestamptz"},
    {"id":4,"name":"kafka_timestamp_type","required":true,"type":"int"},
    {"id":5,"name":"key","required":false,"type":"binary"},
    {"id":6,"name":"value","required":false,"type":"binary"},
    {"id":7,"name":"headers","required":false,"type":{"type":"list","element-id":8,"element-required":true,
      "element":{"type":"struct","fields":[{"id":9,"name":"key","required":true,"type":"string"},
                                           {"id":10,"name":"value","required":false,"type":"binary"}]}}}]})");
}
json CanonicalSpec() {
  return json::parse(R"({"spec-id":0,"fields":[
    {"name":"kafka_partition","transform":"identity","source-id":1,"field-id":1000}]})");
}

// A schema and spec with a partition field of each kind summaries encode.
json RichSchema() {
  return json::parse(R"j({"type":"struct","schema-id":3,"fields":[
    {"id":1,"name":"id","required":true,"type":"long"},
    {"id":2,"name":"name","required":false,"type":"string"},
    {"id":3,"name":"ts","required":true,"type":"timestamptz"},
    {"id":4,"name":"price","required":false,"type":"double"},
    {"id":5,"name":"amount","required":false,"type":"decimal(9, 2)"},
    {"id":6,"name":"flag","required":false,"type":"boolean"},
    {"id":7,"name":"u","required":false,"type":"uuid"}]})j");
}
json RichSpec() {
  return json::parse(R"({"spec-id":2,"fields":[
    {"name":"name","transform":"identity","source-id":2,"field-id":1000},
    {"name":"ts_day","transform":"day","source-id":3,"field-id":1001},
    {"name":"price","transform":"identity","source-id":4,"field-id":1002},
    {"name":"amount","transform":"identity","source-id":5,"field-id":1003},
    {"name":"id_bucket","transform":"bucket[8]","source-id":1,"field-id":1004},
    {"name":"flag","transform":"identity","source-id":6,"field-id":1005},
    {"name":"u","transform":"identity","source-id":7,"field-id":1006}]})");
}

struct SnapshotInfo {
  int64_t id = 0;
  std::optional<int64_t> parent;
  int64_t seq = 0;
  std::string list;
  std::optional<int64_t> first_row_id;
  int64_t added_rows = 0;
};

SnapshotInfo Snap(int64_t id, std::optional<int64_t> parent, int64_t seq, std::string list,
                  std::optional<int64_t> first_row_id = std::nullopt, int64_t added_rows = 0) {
  SnapshotInfo s;
  s.id = id;
  s.parent = parent;
  s.seq = seq;
  s.list = std::move(list);
  s.first_row_id = first_row_id;
  s.added_rows = added_rows;
  return s;
}

json MetadataJson(int version, const std::string& location, const json& schema, const json& spec,
                  const std::vector<SnapshotInfo>& snaps, int64_t next_row_id = 0) {
  json md = {{"format-version", version},
             {"table-uuid", "8c5a2e0c-3f0e-4b7a-9d8e-1b2c3d4e5f60"},
             {"location", location},
             {"last-sequence-number", snaps.empty() ? 0 : snaps.back().seq},
             {"last-updated-ms", 1764547200000},
             {"last-column-id", 10},
             {"current-schema-id", schema["schema-id"]},
             {"schemas", json::array({schema})},
             {"default-spec-id", spec["spec-id"]},
             {"partition-specs", json::array({spec})},
             {"last-partition-id", 1006},
             {"default-sort-order-id", 0},
             {"sort-orders", json::array({{{"order-id", 0}, {"fields", json::array()}}})},
             {"properties", json::object()},
             {"snapshot-log", json::array()},
             {"metadata-log", json::array()}};
  if (version >= 3) md["next-row-id"] = next_row_id;
  json js = json::array();
  for (const auto& s : snaps) {
    json j = {{"snapshot-id", s.id},
              {"sequence-number", s.seq},
              {"timestamp-ms", 1764547200000 + s.seq},
              {"manifest-list", s.list},
              {"summary", {{"operation", "append"}}},
              {"schema-id", schema["schema-id"]}};
    if (s.parent) j["parent-snapshot-id"] = *s.parent;
    if (s.first_row_id) {
      j["first-row-id"] = *s.first_row_id;
      j["added-rows"] = s.added_rows;
    }
    js.push_back(j);
  }
  md["snapshots"] = js;
  if (!snaps.empty()) {
    md["current-snapshot-id"] = snaps.back().id;
    md["refs"] = {{"main", {{"snapshot-id", snaps.back().id}, {"type", "branch"}}}};
  }
  return md;
}

TableMetadata ParseMd(const json& j) {
  auto md = TableMetadata::Parse(j.dump(), "test metadata");
  EXPECT_TRUE(md.ok()) << md.status().ToString();
  return md.ok() ? std::move(*md) : TableMetadata{};
}

DataFile CanonicalFile(const std::string& path, int32_t partition, int64_t first_offset, int64_t rows) {
  DataFile f;
  f.path = path;
  f.format = "parquet";
  f.partition = {Int(partition)};
  f.record_count = rows;
  f.file_size = 1000 + rows;
  for (int32_t id : {1, 2, 3, 4, 5, 6, 9, 10}) {
    f.column_sizes[id] = 10 * id + rows;
    f.value_counts[id] = rows;
    f.null_value_counts[id] = id == 5 ? 1 : 0;
  }
  f.lower_bounds[1] = EncodeIntBound(partition);
  f.upper_bounds[1] = EncodeIntBound(partition);
  f.lower_bounds[2] = EncodeLongBound(first_offset);
  f.upper_bounds[2] = EncodeLongBound(first_offset + rows - 1);
  f.split_offsets = {4};
  f.sort_order_id = 1;
  return f;
}

ManifestEntry Added(DataFile f) {
  ManifestEntry e;
  e.status = EntryStatus::kAdded;
  e.file = std::move(f);
  return e;
}

void ExpectSameFile(const DataFile& got, const DataFile& want) {
  EXPECT_EQ(got.path, want.path);
  EXPECT_EQ(got.content, want.content);
  EXPECT_EQ(got.format, want.format);
  EXPECT_EQ(got.spec_id, want.spec_id);
  ASSERT_EQ(got.partition.size(), want.partition.size()) << want.path;
  for (size_t i = 0; i < want.partition.size(); ++i) {
    EXPECT_EQ(got.partition[i].ToString(), want.partition[i].ToString()) << want.path << " partition " << i;
  }
  EXPECT_EQ(got.record_count, want.record_count);
  EXPECT_EQ(got.file_size, want.file_size);
  EXPECT_EQ(got.column_sizes, want.column_sizes);
  EXPECT_EQ(got.value_counts, want.value_counts);
  EXPECT_EQ(got.null_value_counts, want.null_value_counts);
  EXPECT_EQ(got.nan_value_counts, want.nan_value_counts);
  EXPECT_EQ(got.lower_bounds, want.lower_bounds);
  EXPECT_EQ(got.upper_bounds, want.upper_bounds);
  EXPECT_EQ(got.split_offsets, want.split_offsets);
  EXPECT_EQ(got.sort_order_id, want.sort_order_id);
  EXPECT_EQ(got.referenced_data_file, want.referenced_data_file);
  EXPECT_EQ(got.content_offset, want.content_offset);
  EXPECT_EQ(got.content_size, want.content_size);
}

std::unique_ptr<avro::OcfReader> OpenAvro(const std::string& path) {
  storage::LocalFileIO io;
  auto data = io.ReadAll(path);
  EXPECT_TRUE(data.ok()) << data.status().ToString();
  auto r = avro::OcfReader::Open(data.ok() ? std::move(*data) : std::string(), path);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(*r) : nullptr;
}

// The non-null branch of an optional field's union.
const avro::Schema& Branch(const avro::Schema& record, const std::string& field) {
  const int i = record.FieldIndex(field);
  EXPECT_GE(i, 0) << field;
  const avro::Schema& s = *record.fields.at(i).schema;
  if (s.type != avro::Type::kUnion) return s;
  EXPECT_EQ(s.branches.size(), 2u) << field;
  EXPECT_EQ(s.branches[0]->type, avro::Type::kNull) << field;
  return *s.branches[1];
}

class ManifestWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/thaw_mwriter_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string Path(const std::string& name) const { return (dir_ / "metadata" / name).string(); }

  fs::path dir_;
  storage::LocalFileIO io_;
};

// ------------------------------------------------------------------- v2

TEST_F(ManifestWriterTest, V2RoundTripInheritsFromTheList) {
  const int64_t kA = 1111, kB = 2222;
  SnapshotInfo a = Snap(kA, std::nullopt, 1, Path("snap-a.avro"));
  SnapshotInfo b = Snap(kB, kA, 2, Path("snap-b.avro"));
  TableMetadata md = ParseMd(MetadataJson(2, dir_.string(), CanonicalSchema(), CanonicalSpec(), {a, b}));
  const PartitionSpec& spec = *md.SpecById(0);

  // Snapshot A: one file; snapshot B: three more, A's manifest carried over.
  std::vector<ManifestEntry> ea{Added(CanonicalFile("/d/a0.parquet", 1, 0, 5))};
  auto ma = WriteManifest(io_, Path("a-m0.avro"), md, spec, kA, ea);
  ASSERT_TRUE(ma.ok()) << ma.status().ToString();
  auto ra = WriteManifestList(io_, a.list, md, *md.SnapshotById(kA), {*ma});
  ASSERT_TRUE(ra.ok()) << ra.status().ToString();
  EXPECT_EQ(*ra, 0);  // no row ids in v2
  auto list_a = ReadManifestList(io_, md, *md.SnapshotById(kA));
  ASSERT_TRUE(list_a.ok()) << list_a.status().ToString();
  ASSERT_EQ(list_a->size(), 1u);

  std::vector<ManifestEntry> eb{Added(CanonicalFile("/d/b0.parquet", 0, 0, 10)),
                                Added(CanonicalFile("/d/b1.parquet", 2, 100, 7)),
                                Added(CanonicalFile("/d/b2.parquet", 1, 5, 3))};
  auto mb = WriteManifest(io_, Path("b-m0.avro"), md, spec, kB, eb);
  ASSERT_TRUE(mb.ok()) << mb.status().ToString();
  EXPECT_EQ(mb->path, Path("b-m0.avro"));
  EXPECT_EQ(mb->length, static_cast<int64_t>(fs::file_size(Path("b-m0.avro"))));
  EXPECT_EQ(mb->added_snapshot_id, kB);
  EXPECT_EQ(mb->sequence_number, 0);  // assigned by the list
  auto rb = WriteManifestList(io_, b.list, md, *md.SnapshotById(kB), {*mb, (*list_a)[0]});
  ASSERT_TRUE(rb.ok()) << rb.status().ToString();

  auto list = ReadManifestList(io_, md, *md.SnapshotById(kB));
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 2u);
  const ManifestFile& lb = (*list)[0];
  EXPECT_EQ(lb.path, mb->path);
  EXPECT_EQ(lb.length, mb->length);
  EXPECT_EQ(lb.spec_id, 0);
  EXPECT_EQ(lb.content, ManifestContent::kData);
  EXPECT_EQ(lb.sequence_number, 2);
  EXPECT_EQ(lb.min_sequence_number, 2);
  EXPECT_EQ(lb.added_snapshot_id, kB);
  EXPECT_EQ(lb.added_files, 3);
  EXPECT_EQ(lb.existing_files, 0);
  EXPECT_EQ(lb.deleted_files, 0);
  EXPECT_EQ(lb.added_rows, 20);
  EXPECT_EQ(lb.existing_rows, 0);
  EXPECT_EQ(lb.deleted_rows, 0);
  EXPECT_FALSE(lb.first_row_id.has_value());
  ASSERT_EQ(lb.partitions.size(), 1u);
  EXPECT_FALSE(lb.partitions[0].contains_null);
  EXPECT_EQ(lb.partitions[0].contains_nan, false);
  EXPECT_EQ(lb.partitions[0].lower_bound, EncodeIntBound(0));
  EXPECT_EQ(lb.partitions[0].upper_bound, EncodeIntBound(2));
  const ManifestFile& la = (*list)[1];
  EXPECT_EQ(la.path, ma->path);
  EXPECT_EQ(la.sequence_number, 1);
  EXPECT_EQ(la.min_sequence_number, 1);
  EXPECT_EQ(la.added_snapshot_id, kA);

  auto entries = ReadManifest(io_, md, lb);
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  ASSERT_EQ(entries->size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const ManifestEntry& e = (*entries)[i];
    EXPECT_EQ(e.status, EntryStatus::kAdded);
    EXPECT_EQ(e.snapshot_id, kB);
    EXPECT_EQ(e.sequence_number, 2);
    EXPECT_EQ(e.file_sequence_number, 2);
    ExpectSameFile(e.file, eb[i].file);
  }
  auto old = ReadManifest(io_, md, la);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  ASSERT_EQ(old->size(), 1u);
  EXPECT_EQ((*old)[0].snapshot_id, kA);
  EXPECT_EQ((*old)[0].sequence_number, 1);
  ExpectSameFile((*old)[0].file, ea[0].file);
}

TEST_F(ManifestWriterTest, V2HeadersAndAvroSchemaAreJavas) {
  const int64_t kA = 77;
  SnapshotInfo a = Snap(kA, std::nullopt, 1, Path("snap-a.avro"));
  TableMetadata md = ParseMd(MetadataJson(2, dir_.string(), CanonicalSchema(), CanonicalSpec(), {a}));
  auto m =
      WriteManifest(io_, Path("m0.avro"), md, *md.SpecById(0), kA, {Added(CanonicalFile("/d/x.parquet", 3, 0, 2))});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_TRUE(WriteManifestList(io_, a.list, md, *md.SnapshotById(kA), {*m}).ok());

  auto r = OpenAvro(m->path);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->codec(), avro::Codec::kDeflate);
  EXPECT_EQ(r->Meta("format-version"), "2");
  EXPECT_EQ(r->Meta("content"), "data");
  EXPECT_EQ(r->Meta("partition-spec-id"), "0");
  EXPECT_EQ(r->Meta("schema-id"), "0");
  EXPECT_EQ(json::parse(r->Meta("partition-spec").value_or("null")), CanonicalSpec()["fields"]);
  // The header schema parses back to the table schema (ids, names, types).
  auto header_schema = Schema::FromJson(json::parse(r->Meta("schema").value_or("{}")));
  ASSERT_TRUE(header_schema.ok()) << header_schema.status().ToString();
  EXPECT_EQ(header_schema->root()->ToString(), md.current_schema().root()->ToString());
  EXPECT_EQ(header_schema->FindById(8)->type->ToString(), "struct<key: string, value: binary>");
  EXPECT_EQ(json::parse(r->Meta("schema").value_or("{}")), CanonicalSchema());

  const avro::Schema& entry = r->schema();
  EXPECT_EQ(entry.name, "manifest_entry");
  const avro::Schema& df = *entry.fields.at(entry.FieldIndexById(2)).schema;
  EXPECT_EQ(df.name, "r2");
  const avro::Schema& part = *df.fields.at(df.FieldIndexById(102)).schema;
  EXPECT_EQ(part.name, "r102");
  ASSERT_EQ(part.fields.size(), 1u);
  EXPECT_EQ(part.fields[0].name, "kafka_partition");
  EXPECT_EQ(part.fields[0].field_id, 1000);
  // Int-keyed maps: arrays of k<key>_v<value> records, logicalType map.
  const avro::Schema& sizes = Branch(df, "column_sizes");
  EXPECT_EQ(sizes.type, avro::Type::kArray);
  EXPECT_EQ(sizes.logical_type, "map");
  EXPECT_EQ(sizes.items->name, "k117_v118");
  EXPECT_EQ(sizes.items->fields[0].field_id, 117);
  EXPECT_EQ(sizes.items->fields[1].field_id, 118);
  EXPECT_EQ(Branch(df, "upper_bounds").items->name, "k129_v130");
  EXPECT_EQ(Branch(df, "split_offsets").element_id, 133);
  // v2 has no row lineage or DV fields.
  EXPECT_LT(df.FieldIndexById(142), 0);
  EXPECT_LT(df.FieldIndexById(144), 0);
  EXPECT_GE(df.FieldIndexById(143), 0);
  // Empty metric maps are null, not empty arrays: written data file values.
  auto rows = r->ReadAll();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  const avro::Value* file = (*rows)[0].GetById(2);
  EXPECT_TRUE(file->GetById(137)->is_null());     // nan_value_counts: none given
  EXPECT_TRUE((*rows)[0].GetById(1)->is_null());  // snapshot_id inherited
  EXPECT_TRUE((*rows)[0].GetById(3)->is_null());
  EXPECT_TRUE((*rows)[0].GetById(4)->is_null());
  EXPECT_EQ(file->GetById(101)->bytes, "PARQUET");

  auto l = OpenAvro(a.list);
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->codec(), avro::Codec::kDeflate);
  EXPECT_EQ(l->Meta("snapshot-id"), std::to_string(kA));
  EXPECT_EQ(l->Meta("parent-snapshot-id"), "null");
  EXPECT_EQ(l->Meta("sequence-number"), "1");
  EXPECT_EQ(l->Meta("format-version"), "2");
  EXPECT_FALSE(l->Meta("first-row-id").has_value());
  EXPECT_EQ(l->schema().name, "manifest_file");
  const avro::Schema& parts = Branch(l->schema(), "partitions");
  EXPECT_EQ(parts.element_id, 508);
  EXPECT_EQ(parts.items->name, "r508");
  EXPECT_LT(l->schema().FieldIndexById(520), 0);
}

// ------------------------------------------------------------------- v3

TEST_F(ManifestWriterTest, V3AssignsFirstRowIdsToDataManifests) {
  const int64_t kA = 31, kB = 32;
  SnapshotInfo a = Snap(kA, std::nullopt, 1, Path("snap-a.avro"), 100, 15);
  SnapshotInfo b = Snap(kB, kA, 2, Path("snap-b.avro"), 115, 24);
  TableMetadata md = ParseMd(MetadataJson(3, dir_.string(), CanonicalSchema(), CanonicalSpec(), {a, b}, 139));
  const PartitionSpec& spec = *md.SpecById(0);

  auto ma =
      WriteManifest(io_, Path("a-m0.avro"), md, spec, kA,
                    {Added(CanonicalFile("/d/a0.parquet", 0, 0, 10)), Added(CanonicalFile("/d/a1.parquet", 1, 0, 5))});
  ASSERT_TRUE(ma.ok()) << ma.status().ToString();
  EXPECT_FALSE(ma->first_row_id.has_value());
  auto ra = WriteManifestList(io_, a.list, md, *md.SnapshotById(kA), {*ma});
  ASSERT_TRUE(ra.ok()) << ra.status().ToString();
  EXPECT_EQ(*ra, 15);
  auto list_a = ReadManifestList(io_, md, *md.SnapshotById(kA));
  ASSERT_TRUE(list_a.ok());

  // B: a data manifest, a deletion-vector manifest, A's manifest as read.
  std::vector<ManifestEntry> eb{Added(CanonicalFile("/d/b0.parquet", 0, 10, 7)),
                                Added(CanonicalFile("/d/b1.parquet", 1, 5, 8)),
                                Added(CanonicalFile("/d/b2.parquet", 2, 0, 9))};
  auto mb = WriteManifest(io_, Path("b-m0.avro"), md, spec, kB, eb);
  ASSERT_TRUE(mb.ok()) << mb.status().ToString();
  DataFile dv;
  dv.content = FileContent::kPositionDeletes;
  dv.path = dir_.string() + "/data/dv.puffin";
  dv.format = "puffin";
  dv.partition = {Int(0)};
  dv.record_count = 3;
  dv.file_size = 120;
  dv.referenced_data_file = "/d/a0.parquet";
  dv.content_offset = 4;
  dv.content_size = 60;
  auto md1 = WriteManifest(io_, Path("b-m1.avro"), md, spec, kB, {Added(dv)});
  ASSERT_TRUE(md1.ok()) << md1.status().ToString();
  EXPECT_EQ(md1->content, ManifestContent::kDeletes);
  auto rb = WriteManifestList(io_, b.list, md, *md.SnapshotById(kB), {*mb, *md1, (*list_a)[0]});
  ASSERT_TRUE(rb.ok()) << rb.status().ToString();
  EXPECT_EQ(*rb, 24);  // only B's data manifest is new

  auto l = OpenAvro(b.list);
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->Meta("first-row-id"), "115");
  EXPECT_EQ(l->Meta("format-version"), "3");
  EXPECT_EQ(l->Meta("parent-snapshot-id"), std::to_string(kA));
  EXPECT_GE(l->schema().FieldIndexById(520), 0);

  auto list = ReadManifestList(io_, md, *md.SnapshotById(kB));
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[0].first_row_id, 115);
  EXPECT_FALSE((*list)[1].first_row_id.has_value());  // delete manifests get none
  EXPECT_EQ((*list)[1].content, ManifestContent::kDeletes);
  EXPECT_EQ((*list)[2].first_row_id, 100);  // carried over as assigned by A

  auto entries = ReadManifest(io_, md, (*list)[0]);
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ((*entries)[0].file.first_row_id, 115);
  EXPECT_EQ((*entries)[1].file.first_row_id, 122);
  EXPECT_EQ((*entries)[2].file.first_row_id, 130);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ((*entries)[i].snapshot_id, kB);
    EXPECT_EQ((*entries)[i].sequence_number, 2);
    ExpectSameFile((*entries)[i].file, eb[i].file);
  }
  auto dvs = ReadManifest(io_, md, (*list)[1]);
  ASSERT_TRUE(dvs.ok()) << dvs.status().ToString();
  ASSERT_EQ(dvs->size(), 1u);
  EXPECT_TRUE((*dvs)[0].file.is_deletion_vector());
  EXPECT_FALSE((*dvs)[0].file.first_row_id.has_value());
  EXPECT_EQ((*dvs)[0].sequence_number, 2);
  ExpectSameFile((*dvs)[0].file, dv);
  auto dvr = OpenAvro((*list)[1].path);
  ASSERT_NE(dvr, nullptr);
  EXPECT_EQ(dvr->Meta("content"), "deletes");
  EXPECT_EQ(dvr->Meta("format-version"), "3");

  auto old = ReadManifest(io_, md, (*list)[2]);
  ASSERT_TRUE(old.ok());
  ASSERT_EQ(old->size(), 2u);
  EXPECT_EQ((*old)[0].file.first_row_id, 100);
  EXPECT_EQ((*old)[1].file.first_row_id, 110);
  EXPECT_EQ((*old)[1].sequence_number, 1);
}

// Existing and deleted entries carry their own snapshot ids and sequence
// numbers; the list's min_sequence_number is the smallest of them.
TEST_F(ManifestWriterTest, CarriedEntriesKeepTheirSequenceNumbers) {
  const int64_t kC = 9;
  SnapshotInfo c = Snap(kC, 8, 6, Path("snap-c.avro"));
  TableMetadata md = ParseMd(MetadataJson(2, dir_.string(), CanonicalSchema(), CanonicalSpec(), {c}));
  ManifestEntry kept = Added(CanonicalFile("/d/kept.parquet", 0, 0, 4));
  kept.status = EntryStatus::kExisting;
  kept.snapshot_id = 5;
  kept.sequence_number = 3;
  kept.file_sequence_number = 4;
  ManifestEntry gone = Added(CanonicalFile("/d/gone.parquet", 1, 0, 6));
  gone.status = EntryStatus::kDeleted;
  gone.snapshot_id = 7;
  gone.sequence_number = 5;
  gone.file_sequence_number = 5;
  auto m = WriteManifest(io_, Path("c-m0.avro"), md, *md.SpecById(0), kC,
                         {Added(CanonicalFile("/d/new.parquet", 2, 0, 2)), kept, gone});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->added_files, 1);
  EXPECT_EQ(m->existing_files, 1);
  EXPECT_EQ(m->deleted_files, 1);
  EXPECT_EQ(m->added_rows, 2);
  EXPECT_EQ(m->existing_rows, 4);
  EXPECT_EQ(m->deleted_rows, 6);
  ASSERT_TRUE(WriteManifestList(io_, c.list, md, *md.SnapshotById(kC), {*m}).ok());
  auto list = ReadManifestList(io_, md, *md.SnapshotById(kC));
  ASSERT_TRUE(list.ok());
  EXPECT_EQ((*list)[0].sequence_number, 6);
  EXPECT_EQ((*list)[0].min_sequence_number, 3);
  auto entries = ReadManifest(io_, md, (*list)[0]);
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ((*entries)[0].snapshot_id, kC);
  EXPECT_EQ((*entries)[0].sequence_number, 6);
  EXPECT_EQ((*entries)[1].status, EntryStatus::kExisting);
  EXPECT_EQ((*entries)[1].snapshot_id, 5);
  EXPECT_EQ((*entries)[1].sequence_number, 3);
  EXPECT_EQ((*entries)[1].file_sequence_number, 4);
  EXPECT_EQ((*entries)[2].status, EntryStatus::kDeleted);
  EXPECT_EQ((*entries)[2].snapshot_id, kC);  // the snapshot that deletes it
  EXPECT_EQ((*entries)[2].sequence_number, 5);
}

// ------------------------------------------------------ partition summaries

std::string Uuid(char fill) { return std::string(16, fill); }

std::vector<ManifestEntry> RichEntries() {
  auto file = [](const std::string& path, std::vector<Datum> partition, int64_t lo_id, int64_t hi_id) {
    DataFile f;
    f.path = path;
    f.format = "parquet";
    f.spec_id = 2;
    f.partition = std::move(partition);
    f.record_count = hi_id - lo_id + 1;
    f.file_size = 4096;
    f.value_counts[1] = f.record_count;
    f.null_value_counts[1] = 0;
    f.lower_bounds[1] = EncodeLongBound(lo_id);
    f.upper_bounds[1] = EncodeLongBound(hi_id);
    return Added(std::move(f));
  };
  // name, ts_day, price, amount (unscaled), id_bucket, flag, u
  return {
      file("/d/f0.parquet", {Str("b"), Int(19000), Dbl(2.5), Int(12345), Int(3), Int(1), Str(Uuid('\x20'))}, 100, 199),
      file("/d/f1.parquet",
           {Null(), Int(18999), Dbl(std::numeric_limits<double>::quiet_NaN()), Int(-5), Int(7), Int(0),
            Str(Uuid('\x10'))},
           0, 49),
      file("/d/f2.parquet", {Str("a"), Int(19001), Dbl(-0.0), Null(), Int(0), Null(), Str(Uuid('\x20'))}, 50, 99)};
}

// A merge append (MergeManifests): the parent's small manifests become one
// once they number min_count; entries keep their snapshots and sequence
// numbers, the snapshot's own manifest stays as it is.
TEST_F(ManifestWriterTest, MergingKeepsEveryLiveEntryWithItsSequenceNumber) {
  std::vector<SnapshotInfo> snaps;
  for (int64_t i = 1; i <= 5; ++i) {
    snaps.push_back(Snap(100 + i, i == 1 ? std::nullopt : std::optional<int64_t>(99 + i), i,
                         Path("snap-" + std::to_string(i) + ".avro")));
  }
  TableMetadata md = ParseMd(MetadataJson(2, dir_.string(), CanonicalSchema(), CanonicalSpec(), snaps));
  const PartitionSpec& spec = *md.SpecById(0);
  std::vector<ManifestFile> carried;  // newest first, as a manifest list holds them
  for (int64_t i = 1; i <= 4; ++i) {
    const int64_t id = 100 + i;
    auto m = WriteManifest(io_, Path(std::to_string(i) + "-m0.avro"), md, spec, id,
                           {Added(CanonicalFile("/d/" + std::to_string(i) + ".parquet", 0, 10 * i, 10))});
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    std::vector<ManifestFile> list{*m};
    list.insert(list.end(), carried.begin(), carried.end());
    ASSERT_TRUE(WriteManifestList(io_, snaps[i - 1].list, md, *md.SnapshotById(id), list).ok());
    auto read = ReadManifestList(io_, md, *md.SnapshotById(id));
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    carried = *read;
  }
  const int64_t kNew = 105;
  auto own = WriteManifest(io_, Path("5-m0.avro"), md, spec, kNew, {Added(CanonicalFile("/d/5.parquet", 0, 50, 10))});
  ASSERT_TRUE(own.ok());
  std::vector<ManifestFile> all{*own};
  all.insert(all.end(), carried.begin(), carried.end());

  ManifestMergeOptions opts;
  opts.min_count = 6;  // five small manifests: fewer than that, nothing merged
  auto same = MergeManifests(io_, md, kNew, all, Path("5-merge"), opts);
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ(same->size(), 5u);
  opts.min_count = 5;
  auto merged = MergeManifests(io_, md, kNew, all, Path("5-merge"), opts);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  ASSERT_EQ(merged->size(), 2u);
  EXPECT_EQ((*merged)[0].path, own->path);
  EXPECT_EQ((*merged)[1].path, Path("5-merge-m1.avro"));
  EXPECT_EQ((*merged)[1].existing_files, 4);
  EXPECT_EQ((*merged)[1].added_files, 0);

  ASSERT_TRUE(WriteManifestList(io_, snaps[4].list, md, *md.SnapshotById(kNew), *merged).ok());
  auto list = ReadManifestList(io_, md, *md.SnapshotById(kNew));
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  std::map<std::string, std::pair<int64_t, int64_t>> got;  // path -> (snapshot, data sequence number)
  for (const auto& m : *list) {
    auto entries = ReadManifest(io_, md, m);
    ASSERT_TRUE(entries.ok()) << entries.status().ToString();
    for (const auto& e : *entries) got[e.file.path] = {e.snapshot_id, e.sequence_number};
  }
  for (int64_t i = 1; i <= 5; ++i) {
    EXPECT_EQ(got["/d/" + std::to_string(i) + ".parquet"], (std::pair<int64_t, int64_t>{100 + i, i})) << i;
  }
  // Large manifests (past target_bytes) are left alone.
  opts.target_bytes = 1;
  auto big = MergeManifests(io_, md, kNew, all, Path("5-big"), opts);
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->size(), 5u);
}

TEST_F(ManifestWriterTest, PartitionSummariesUseThePartitionTypesEncoding) {
  const int64_t kA = 5;
  SnapshotInfo a = Snap(kA, std::nullopt, 1, Path("snap-a.avro"));
  TableMetadata md = ParseMd(MetadataJson(2, dir_.string(), RichSchema(), RichSpec(), {a}));
  const auto entries = RichEntries();
  auto m = WriteManifest(io_, Path("m0.avro"), md, *md.SpecById(2), kA, entries);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->partitions.size(), 7u);
  const auto& p = m->partitions;
  // name: string, a null among the values.
  EXPECT_TRUE(p[0].contains_null);
  EXPECT_EQ(p[0].lower_bound, "a");
  EXPECT_EQ(p[0].upper_bound, "b");
  // ts_day: day() gives a date, 4 bytes.
  EXPECT_FALSE(p[1].contains_null);
  EXPECT_EQ(p[1].lower_bound, EncodeIntBound(18999));
  EXPECT_EQ(p[1].upper_bound, EncodeIntBound(19001));
  // price: double; NaN is flagged, not a bound; -0.0 orders below 2.5.
  EXPECT_FALSE(p[2].contains_null);
  EXPECT_EQ(p[2].contains_nan, true);
  EXPECT_EQ(p[2].lower_bound, DoubleBytes(-0.0));
  EXPECT_EQ(p[2].upper_bound, DoubleBytes(2.5));
  // amount: decimal(9,2) as minimal big-endian two's complement.
  EXPECT_TRUE(p[3].contains_null);
  EXPECT_EQ(p[3].lower_bound, std::string("\xfb", 1));      // -5
  EXPECT_EQ(p[3].upper_bound, std::string("\x30\x39", 2));  // 12345
  // id_bucket: int.
  EXPECT_EQ(p[4].lower_bound, EncodeIntBound(0));
  EXPECT_EQ(p[4].upper_bound, EncodeIntBound(7));
  EXPECT_EQ(p[4].contains_nan, false);
  // flag: boolean, one byte.
  EXPECT_TRUE(p[5].contains_null);
  EXPECT_EQ(p[5].lower_bound, std::string(1, '\0'));
  EXPECT_EQ(p[5].upper_bound, std::string(1, '\1'));
  // u: uuid, 16 raw bytes.
  EXPECT_EQ(p[6].lower_bound, Uuid('\x10'));
  EXPECT_EQ(p[6].upper_bound, Uuid('\x20'));

  // The partition struct is typed by the transforms' result types.
  auto r = OpenAvro(m->path);
  ASSERT_NE(r, nullptr);
  const avro::Schema& df = *r->schema().fields.at(r->schema().FieldIndexById(2)).schema;
  const avro::Schema& part = *df.fields.at(df.FieldIndexById(102)).schema;
  ASSERT_EQ(part.fields.size(), 7u);
  EXPECT_EQ(Branch(part, "name").type, avro::Type::kString);
  EXPECT_EQ(Branch(part, "ts_day").type, avro::Type::kInt);
  EXPECT_EQ(Branch(part, "ts_day").logical_type, "date");
  EXPECT_EQ(Branch(part, "price").type, avro::Type::kDouble);
  const avro::Schema& amount = Branch(part, "amount");
  EXPECT_EQ(amount.type, avro::Type::kFixed);
  EXPECT_EQ(amount.name, "decimal_9_2");
  EXPECT_EQ(amount.fixed_size, 4);
  EXPECT_EQ(amount.logical_type, "decimal");
  EXPECT_EQ(Branch(part, "id_bucket").type, avro::Type::kInt);
  EXPECT_EQ(Branch(part, "flag").type, avro::Type::kBoolean);
  EXPECT_EQ(Branch(part, "u").type, avro::Type::kFixed);
  EXPECT_EQ(Branch(part, "u").name, "uuid_fixed");
  EXPECT_EQ(Branch(part, "u").logical_type, "uuid");
  for (size_t i = 0; i < part.fields.size(); ++i) EXPECT_EQ(part.fields[i].field_id, 1000 + static_cast<int>(i));

  // Partition values read back (the decimal as its 4-byte fixed).
  ASSERT_TRUE(WriteManifestList(io_, a.list, md, *md.SnapshotById(kA), {*m}).ok());
  auto list = ReadManifestList(io_, md, *md.SnapshotById(kA));
  ASSERT_TRUE(list.ok());
  EXPECT_EQ((*list)[0].partitions[3].lower_bound, p[3].lower_bound);
  EXPECT_EQ((*list)[0].partitions[2].contains_nan, true);
  auto got = ReadManifest(io_, md, (*list)[0]);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 3u);
  const auto& f0 = (*got)[0].file.partition;
  EXPECT_EQ(f0[0], Str("b"));
  EXPECT_EQ(f0[1], Int(19000));
  EXPECT_EQ(f0[2], Dbl(2.5));
  EXPECT_EQ(f0[3], Str(std::string("\x00\x00\x30\x39", 4)));
  EXPECT_EQ(f0[5], Int(1));
  EXPECT_EQ(f0[6], Str(Uuid('\x20')));
  const auto& f1 = (*got)[1].file.partition;
  EXPECT_EQ(f1[0], Null());
  EXPECT_TRUE(std::isnan(f1[2].d));
  EXPECT_EQ(f1[3], Str(std::string("\xff\xff\xff\xfb", 4)));
  EXPECT_EQ((*got)[2].file.partition[3], Null());
}

// ------------------------------------------------------------------ errors

TEST_F(ManifestWriterTest, RejectsWhatItCannotWriteCorrectly) {
  SnapshotInfo a = Snap(1, std::nullopt, 1, Path("snap-a.avro"));
  TableMetadata md = ParseMd(MetadataJson(2, dir_.string(), CanonicalSchema(), CanonicalSpec(), {a}));
  const PartitionSpec& spec = *md.SpecById(0);
  auto message = [&](const std::vector<ManifestEntry>& entries) {
    auto m = WriteManifest(io_, Path("bad.avro"), md, spec, 1, entries);
    EXPECT_FALSE(m.ok());
    EXPECT_FALSE(fs::exists(Path("bad.avro")));
    return m.ok() ? std::string() : m.status().ToString();
  };
  DataFile dv = CanonicalFile("/d/dv.puffin", 0, 0, 1);
  dv.content = FileContent::kPositionDeletes;
  EXPECT_NE(message({Added(CanonicalFile("/d/x.parquet", 0, 0, 1)), Added(dv)}).find("cannot share a manifest"),
            std::string::npos);
  DataFile two = CanonicalFile("/d/two.parquet", 0, 0, 1);
  two.partition.push_back(Int(1));
  const std::string arity = message({Added(two)});
  EXPECT_NE(arity.find("/d/two.parquet"), std::string::npos) << arity;
  EXPECT_NE(arity.find("2 partition values"), std::string::npos) << arity;
  DataFile wrong = CanonicalFile("/d/wrong.parquet", 0, 0, 1);
  wrong.partition = {Str("zero")};
  const std::string type = message({Added(wrong)});
  EXPECT_NE(type.find("kafka_partition"), std::string::npos) << type;
  EXPECT_NE(type.find("/d/wrong.parquet"), std::string::npos) << type;
  ManifestEntry other = Added(CanonicalFile("/d/o.parquet", 0, 0, 1));
  other.snapshot_id = 42;
  EXPECT_NE(message({other}).find("EXISTING"), std::string::npos);

  // A v3 list needs the snapshot's first row id; v1 is not written.
  TableMetadata v3 = ParseMd(MetadataJson(3, dir_.string(), CanonicalSchema(), CanonicalSpec(), {a}));
  Snapshot no_row_id = *v3.SnapshotById(1);
  no_row_id.first_row_id.reset();
  auto l = WriteManifestList(io_, Path("snap-x.avro"), v3, no_row_id, {});
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().ToString().find("first-row-id"), std::string::npos) << l.status().ToString();
  TableMetadata v1 = md;
  v1.format_version = 1;
  auto m1 = WriteManifest(io_, Path("v1.avro"), v1, spec, 1, {});
  ASSERT_FALSE(m1.ok());
  EXPECT_EQ(m1.status().code(), StatusCode::kUnsupported);
}

TEST(ManifestWriterBounds, LittleEndianSingleValues) {
  EXPECT_EQ(EncodeIntBound(1), std::string("\x01\x00\x00\x00", 4));
  EXPECT_EQ(EncodeIntBound(-2), std::string("\xfe\xff\xff\xff", 4));
  EXPECT_EQ(EncodeLongBound(0x0102030405060708LL), std::string("\x08\x07\x06\x05\x04\x03\x02\x01", 8));
  EXPECT_EQ(DecodeIntegerBound(EncodeLongBound(-7)), -7);
  EXPECT_EQ(DecodeIntegerBound(EncodeIntBound(INT32_MIN)), INT32_MIN);
}

// ---------------------------------------------------------------- pyiceberg

class PyIcebergReadsManifests : public ManifestWriterTest, public ::testing::WithParamInterface<int> {};

TEST_P(PyIcebergReadsManifests, FieldsAndPlanningMatch) {
  const char* python = std::getenv("THAW_PYTHON");
  if (python == nullptr || *python == '\0') GTEST_SKIP() << "set THAW_PYTHON to a python with pyiceberg";
  const int version = GetParam();
  const int64_t kA = 4001, kB = 4002;
  SnapshotInfo a = Snap(kA, std::nullopt, 1, Path("snap-a.avro"));
  SnapshotInfo b = Snap(kB, kA, 2, Path("snap-b.avro"));
  if (version >= 3) {
    a.first_row_id = 0;
    a.added_rows = 50;
    b.first_row_id = 50;
    b.added_rows = 150;
  }
  const json mdj = MetadataJson(version, dir_.string(), RichSchema(), RichSpec(), {a, b}, 200);
  TableMetadata md = ParseMd(mdj);
  const PartitionSpec& spec = *md.SpecById(2);
  auto entries = RichEntries();
  // A adds f1; B adds f0 and f2 and carries A's manifest.
  auto ma = WriteManifest(io_, Path("a-m0.avro"), md, spec, kA, {entries[1]});
  ASSERT_TRUE(ma.ok()) << ma.status().ToString();
  ASSERT_TRUE(WriteManifestList(io_, a.list, md, *md.SnapshotById(kA), {*ma}).ok());
  auto list_a = ReadManifestList(io_, md, *md.SnapshotById(kA));
  ASSERT_TRUE(list_a.ok());
  auto mb = WriteManifest(io_, Path("b-m0.avro"), md, spec, kB, {entries[0], entries[2]});
  ASSERT_TRUE(mb.ok()) << mb.status().ToString();
  ASSERT_TRUE(WriteManifestList(io_, b.list, md, *md.SnapshotById(kB), {*mb, (*list_a)[0]}).ok());
  const std::string metadata = (dir_ / "metadata" / "00001-x.metadata.json").string();
  {
    FILE* f = std::fopen(metadata.c_str(), "w");
    ASSERT_NE(f, nullptr);
    const std::string text = mdj.dump();
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }

  const fs::path script = fs::path(THAW_SOURCE_DIR) / "tests/unit/iceberg/read_manifests_pyiceberg.py";
  const std::string cmd = std::string("'") + python + "' '" + script.string() + "' '" + metadata + "' 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  const int rc = pclose(pipe);
  if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77) GTEST_SKIP() << "pyiceberg not available to " << python;
  ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << cmd << "\n" << out;
  const json got = json::parse(out, nullptr, false);
  ASSERT_FALSE(got.is_discarded()) << out;

  const json& lists = got["lists"];
  ASSERT_EQ(lists.size(), 2u) << out;
  const std::vector<std::pair<const ManifestFile*, int64_t>> want_lists{{&*mb, 2}, {&(*list_a)[0], 1}};
  for (size_t i = 0; i < 2; ++i) {
    const ManifestFile& w = *want_lists[i].first;
    const json& g = lists[i];
    SCOPED_TRACE(w.path);
    EXPECT_EQ(g["manifest_path"], w.path);
    EXPECT_EQ(g["manifest_length"], w.length);
    EXPECT_EQ(g["partition_spec_id"], 2);
    EXPECT_EQ(g["content"], 0);
    EXPECT_EQ(g["sequence_number"], want_lists[i].second);
    EXPECT_EQ(g["min_sequence_number"], want_lists[i].second);
    EXPECT_EQ(g["added_snapshot_id"], w.added_snapshot_id);
    EXPECT_EQ(g["added_files_count"], *w.added_files);
    EXPECT_EQ(g["existing_files_count"], 0);
    EXPECT_EQ(g["deleted_files_count"], 0);
    EXPECT_EQ(g["added_rows_count"], *w.added_rows);
    EXPECT_EQ(g["existing_rows_count"], 0);
    EXPECT_EQ(g["deleted_rows_count"], 0);
    ASSERT_EQ(g["partitions"].size(), w.partitions.size());
    for (size_t k = 0; k < w.partitions.size(); ++k) {
      const FieldSummary& s = w.partitions[k];
      const json& gs = g["partitions"][k];
      EXPECT_EQ(gs["contains_null"], s.contains_null) << k;
      EXPECT_EQ(gs["contains_nan"], *s.contains_nan) << k;
      EXPECT_EQ(gs["lower_bound"], (s.lower_bound ? json{{"hex", Hex(*s.lower_bound)}} : json())) << k;
      EXPECT_EQ(gs["upper_bound"], (s.upper_bound ? json{{"hex", Hex(*s.upper_bound)}} : json())) << k;
    }
  }

  // Entries: inheritance applied by pyiceberg too.
  const std::vector<std::vector<const ManifestEntry*>> want_entries{{&entries[0], &entries[2]}, {&entries[1]}};
  for (size_t i = 0; i < 2; ++i) {
    const json& ge = lists[i]["entries"];
    ASSERT_EQ(ge.size(), want_entries[i].size());
    for (size_t k = 0; k < ge.size(); ++k) {
      const DataFile& w = want_entries[i][k]->file;
      const json& g = ge[k];
      SCOPED_TRACE(w.path);
      EXPECT_EQ(g["status"], 1);
      EXPECT_EQ(g["snapshot_id"], i == 0 ? kB : kA);
      EXPECT_EQ(g["sequence_number"], i == 0 ? 2 : 1);
      EXPECT_EQ(g["file_sequence_number"], i == 0 ? 2 : 1);
      EXPECT_EQ(g["content"], 0);
      EXPECT_EQ(g["file_path"], w.path);
      EXPECT_EQ(g["file_format"], "PARQUET");
      EXPECT_EQ(g["spec_id"], 2);
      EXPECT_EQ(g["record_count"], w.record_count);
      EXPECT_EQ(g["file_size_in_bytes"], w.file_size);
      EXPECT_EQ(g["value_counts"], json::array({json::array({1, w.record_count})}));
      EXPECT_EQ(g["null_value_counts"], json::array({json::array({1, 0})}));
      EXPECT_EQ(g["lower_bounds"], json::array({json::array({1, json{{"hex", Hex(w.lower_bounds.at(1))}}})}));
      EXPECT_EQ(g["upper_bounds"], json::array({json::array({1, json{{"hex", Hex(w.upper_bounds.at(1))}}})}));
      // Partition values as pyiceberg decodes them.
      const json& p = g["partition"];
      ASSERT_EQ(p.size(), 7u);
      const auto& wp = w.partition;
      EXPECT_EQ(p[0], wp[0].kind == Datum::kNull ? json() : json(wp[0].s));
      EXPECT_EQ(p[4], wp[4].i);
      if (wp[2].kind == Datum::kDouble && std::isnan(wp[2].d)) {
        EXPECT_EQ(p[2], "NaN");
      } else {
        EXPECT_EQ(p[2].get<double>(), wp[2].d);
        EXPECT_EQ(std::signbit(p[2].get<double>()), std::signbit(wp[2].d));
      }
      if (wp[3].kind == Datum::kNull) {
        EXPECT_TRUE(p[3].is_null());
      } else {
        EXPECT_EQ(p[3],
                  fmt::format("{}{}.{:02}", wp[3].i < 0 ? "-" : "", std::abs(wp[3].i) / 100, std::abs(wp[3].i) % 100));
      }
      EXPECT_EQ(p[5], wp[5].kind == Datum::kNull ? json() : json(wp[5].i != 0));
    }
  }

  // pyiceberg's planning prunes with what was written.
  const json& plans = got["plans"];
  EXPECT_EQ(plans["name_eq_b"], json::array({"/d/f0.parquet"}));
  EXPECT_EQ(plans["name_null"], json::array({"/d/f1.parquet"}));
  EXPECT_EQ(plans["id_ge_150"], json::array({"/d/f0.parquet"}));
  EXPECT_EQ(plans["id_lt_100_and_name_a"], json::array({"/d/f2.parquet"}));
}

INSTANTIATE_TEST_SUITE_P(FormatVersions, PyIcebergReadsManifests, ::testing::Values(2, 3),
                         [](const auto& info) { return "v" + std::to_string(info.param); });

}  // namespace
}  // namespace thaw::iceberg

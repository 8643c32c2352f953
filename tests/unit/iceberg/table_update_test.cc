// Table commits on metadata JSON (iceberg/table_update.h): the REST wire
// forms, requirements, updates, new tables' metadata, and metadata files that
// Thaw's parser and pyiceberg (StaticTable, with $THAW_PYTHON) read back.
#include "thaw/iceberg/table_update.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace thaw::iceberg {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// The archive table's schema (docs/layouts.md): nested ids up to 10.
json ArchiveSchema() {
  return json::parse(R"({"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "kafka_partition", "required": true, "type": "int"},
    {"id": 2, "name": "kafka_offset", "required": true, "type": "long"},
    {"id": 3, "name": "kafka_timestamp", "required": true, "type": "timestamptz"},
    {"id": 4, "name": "kafka_timestamp_type", "required": true, "type": "int"},
    {"id": 5, "name": "key", "required": false, "type": "binary"},
    {"id": 6, "name": "value", "required": false, "type": "binary"},
    {"id": 7, "name": "headers", "required": false, "type": {"type": "list", "element-id": 8, "element-required": true,
      "element": {"type": "struct", "fields": [
        {"id": 9, "name": "key", "required": true, "type": "string"},
        {"id": 10, "name": "value", "required": false, "type": "binary"}]}}}]})");
}

TableCreate ArchiveCreate(const std::string& location, int format_version = 2) {
  TableCreate c;
  c.schema = ArchiveSchema();
  c.partition_spec = json::parse(
      R"({"spec-id": 0, "fields": [{"source-id": 1, "field-id": 1000, "name": "kafka_partition",
          "transform": "identity"}]})");
  c.sort_order = json::parse(R"({"order-id": 1, "fields": [
      {"source-id": 1, "transform": "identity", "direction": "asc", "null-order": "nulls-first"},
      {"source-id": 2, "transform": "identity", "direction": "asc", "null-order": "nulls-first"}]})");
  c.properties = {{"thaw.layout", "thaw/1"}, {"write.parquet.compression-codec", "zstd"}};
  c.location = location;
  c.format_version = format_version;
  return c;
}

Snapshot MakeSnapshot(int64_t id, std::optional<int64_t> parent, int64_t seq, int64_t ts) {
  Snapshot s;
  s.snapshot_id = id;
  s.parent_snapshot_id = parent;
  s.sequence_number = seq;
  s.timestamp_ms = ts;
  s.manifest_list = fmt::format("/wh/t/metadata/snap-{}-1-x.avro", id);
  s.summary = {{"operation", "append"}, {"added-records", "10"}};
  s.schema_id = 0;
  return s;
}

std::vector<TableUpdate> Append(const Snapshot& s) {
  return {TableUpdate::AddSnapshot(s), TableUpdate::SetBranch("main", s.snapshot_id)};
}

TEST(TableUpdate, RestWireForms) {
  EXPECT_EQ(ToJson(TableRequirement::AssertTableUuid("u-1")),
            json::parse(R"({"type":"assert-table-uuid","uuid":"u-1"})"));
  EXPECT_EQ(ToJson(TableRequirement::AssertRefSnapshotId("main", 42)),
            json::parse(R"({"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":42})"));
  EXPECT_EQ(ToJson(TableRequirement::AssertRefSnapshotId("main", std::nullopt)),
            json::parse(R"({"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":null})"));
  EXPECT_EQ(ToJson(TableUpdate::SetBranch("main", 7)),
            json::parse(R"({"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":7})"));
  EXPECT_EQ(ToJson(TableUpdate::RemoveSnapshots({1, 2})),
            json::parse(R"({"action":"remove-snapshots","snapshot-ids":[1,2]})"));
  EXPECT_EQ(ToJson(TableUpdate::SetProperties({{"a", "1"}})),
            json::parse(R"({"action":"set-properties","updates":{"a":"1"}})"));
  TableUpdate rm;
  rm.kind = TableUpdate::Kind::kRemoveProperties;
  rm.removals = {"a"};
  EXPECT_EQ(ToJson(rm), json::parse(R"({"action":"remove-properties","removals":["a"]})"));

  Snapshot s = MakeSnapshot(5, 4, 3, 1000);
  s.first_row_id = 100;
  s.added_rows = 10;
  EXPECT_EQ(ToJson(TableUpdate::AddSnapshot(s)), json::parse(R"({"action":"add-snapshot","snapshot":{
      "snapshot-id":5,"parent-snapshot-id":4,"sequence-number":3,"timestamp-ms":1000,
      "manifest-list":"/wh/t/metadata/snap-5-1-x.avro","summary":{"operation":"append","added-records":"10"},
      "schema-id":0,"first-row-id":100,"added-rows":10}})"));
  // A first snapshot has no parent field at all.
  EXPECT_FALSE(SnapshotToJson(MakeSnapshot(5, std::nullopt, 1, 1)).contains("parent-snapshot-id"));
}

TEST(TableUpdate, NewTableMetadataParsesBack) {
  auto md = NewTableMetadata(ArchiveCreate("s3://b/wh/ns.db/t/"), 1700000000000);
  ASSERT_TRUE(md.ok()) << md.status().ToString();
  EXPECT_EQ((*md)["location"], "s3://b/wh/ns.db/t");
  EXPECT_EQ((*md)["last-column-id"], 10);  // the headers struct's value field
  EXPECT_EQ((*md)["last-partition-id"], 1000);
  EXPECT_EQ((*md)["default-sort-order-id"], 1);
  ASSERT_EQ((*md)["sort-orders"].size(), 2u);
  EXPECT_EQ((*md)["sort-orders"][0], json::parse(R"({"order-id":0,"fields":[]})"));
  EXPECT_EQ((*md)["current-snapshot-id"], -1);
  EXPECT_FALSE(md->contains("next-row-id"));
  EXPECT_TRUE(std::regex_match((*md)["table-uuid"].get<std::string>(),
                               std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")));
  auto parsed = TableMetadata::Parse(md->dump(), "new");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->format_version, 2);
  EXPECT_FALSE(parsed->current_snapshot_id);
  EXPECT_EQ(parsed->current_schema().FindById(10)->name, "value");
  EXPECT_EQ(parsed->Property("thaw.layout"), "thaw/1");
  ASSERT_EQ(parsed->specs.size(), 1u);
  EXPECT_EQ(parsed->specs[0].fields[0].field_id, 1000);

  TableCreate plain = ArchiveCreate("/wh/t", 3);
  plain.partition_spec = nullptr;
  plain.sort_order = nullptr;
  plain.properties["format-version"] = "3";
  auto v3 = NewTableMetadata(plain, 1);
  ASSERT_TRUE(v3.ok()) << v3.status().ToString();
  EXPECT_EQ((*v3)["format-version"], 3);
  EXPECT_EQ((*v3)["next-row-id"], 0);
  EXPECT_EQ((*v3)["last-partition-id"], 999);
  EXPECT_EQ((*v3)["default-sort-order-id"], 0);
  EXPECT_EQ((*v3)["sort-orders"].size(), 1u);
  EXPECT_FALSE((*v3)["properties"].contains("format-version"));

  TableCreate bad = ArchiveCreate("/wh/t");
  bad.partition_spec["fields"][0]["source-id"] = 77;
  auto refused = NewTableMetadata(bad, 1);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("source-id 77"), std::string::npos) << refused.status().message();
  EXPECT_EQ(NewTableMetadata(ArchiveCreate("/wh/t", 1), 1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(NewTableMetadata(ArchiveCreate(""), 1).status().code(), StatusCode::kInvalidArgument);
}

TEST(TableUpdate, AppendsMoveMainAndKeepTheLogs) {
  auto created = NewTableMetadata(ArchiveCreate("/wh/t"), 1000);
  ASSERT_TRUE(created.ok());
  json base = *created;
  base["x-unknown-field"] = {{"kept", true}};  // a field Thaw does not know
  const std::string uuid = base["table-uuid"];

  Snapshot s1 = MakeSnapshot(11, std::nullopt, 1, 2000);
  auto c1 = ApplyCommit(
      base, "/wh/t/metadata/00000-a.metadata.json",
      {TableRequirement::AssertTableUuid(uuid), TableRequirement::AssertRefSnapshotId("main", std::nullopt)},
      Append(s1), 2500);
  ASSERT_TRUE(c1.ok()) << c1.status().ToString();
  EXPECT_EQ((*c1)["x-unknown-field"], base["x-unknown-field"]);
  EXPECT_EQ((*c1)["current-snapshot-id"], 11);
  EXPECT_EQ((*c1)["refs"], json::parse(R"({"main":{"snapshot-id":11,"type":"branch"}})"));
  EXPECT_EQ((*c1)["last-sequence-number"], 1);
  EXPECT_EQ((*c1)["last-updated-ms"], 2000);  // the added snapshot's time, as Iceberg Java
  EXPECT_EQ((*c1)["snapshot-log"], json::parse(R"([{"timestamp-ms":2000,"snapshot-id":11}])"));
  EXPECT_EQ((*c1)["metadata-log"],
            json::parse(R"([{"metadata-file":"/wh/t/metadata/00000-a.metadata.json","timestamp-ms":1000}])"));

  Snapshot s2 = MakeSnapshot(12, 11, 2, 3000);
  auto c2 = ApplyCommit(*c1, "/wh/t/metadata/00001-b.metadata.json",
                        {TableRequirement::AssertRefSnapshotId("main", 11)}, Append(s2), 3100);
  ASSERT_TRUE(c2.ok()) << c2.status().ToString();
  auto parsed = TableMetadata::Parse(c2->dump(), "c2");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->current_snapshot_id, 12);
  EXPECT_EQ(parsed->CurrentSnapshot()->parent_snapshot_id, 11);
  EXPECT_EQ(parsed->last_sequence_number, 2);
  EXPECT_EQ(parsed->snapshot_log.size(), 2u);
  EXPECT_EQ((*c2)["metadata-log"].size(), 2u);

  // Properties only: last-updated-ms is now; main does not move.
  TableUpdate rm;
  rm.kind = TableUpdate::Kind::kRemoveProperties;
  rm.removals = {"thaw.layout"};
  auto c3 = ApplyCommit(*c2, "/wh/t/metadata/00002-c.metadata.json", {}, {TableUpdate::SetProperties({{"k", "v"}}), rm},
                        5000);
  ASSERT_TRUE(c3.ok()) << c3.status().ToString();
  EXPECT_EQ((*c3)["last-updated-ms"], 5000);
  EXPECT_EQ((*c3)["properties"]["k"], "v");
  EXPECT_FALSE((*c3)["properties"].contains("thaw.layout"));
  EXPECT_EQ((*c3)["snapshot-log"].size(), 2u);
  EXPECT_EQ((*c3)["current-snapshot-id"], 12);

  // write.metadata.previous-versions-max bounds the metadata log.
  auto c4 = ApplyCommit(*c3, "/wh/t/metadata/00003-d.metadata.json", {},
                        {TableUpdate::SetProperties({{"write.metadata.previous-versions-max", "2"}})}, 6000);
  ASSERT_TRUE(c4.ok());
  ASSERT_EQ((*c4)["metadata-log"].size(), 2u);
  EXPECT_EQ((*c4)["metadata-log"][1]["metadata-file"], "/wh/t/metadata/00003-d.metadata.json");
}

TEST(TableUpdate, TagsAreSetMovedAndRemovedWithoutMovingMain) {
  EXPECT_EQ(ToJson(TableUpdate::SetTag("thaw-replay/j", 7)),
            json::parse(R"({"action":"set-snapshot-ref","ref-name":"thaw-replay/j","type":"tag","snapshot-id":7})"));
  EXPECT_EQ(ToJson(TableUpdate::RemoveRef("thaw-replay/j")),
            json::parse(R"({"action":"remove-snapshot-ref","ref-name":"thaw-replay/j"})"));
  auto created = NewTableMetadata(ArchiveCreate("/wh/t"), 1000);
  ASSERT_TRUE(created.ok());
  auto c1 = ApplyCommit(*created, "/m/0.json", {}, Append(MakeSnapshot(11, std::nullopt, 1, 2000)), 2000);
  ASSERT_TRUE(c1.ok());
  auto c2 = ApplyCommit(*c1, "/m/1.json", {}, Append(MakeSnapshot(12, 11, 2, 3000)), 3000);
  ASSERT_TRUE(c2.ok());
  // Absent -> 11 (guarded by "absent"), then 11 -> 12.
  auto t1 = ApplyCommit(*c2, "/m/2.json", {TableRequirement::AssertRefSnapshotId("thaw-replay/j", std::nullopt)},
                        {TableUpdate::SetTag("thaw-replay/j", 11)}, 4000);
  ASSERT_TRUE(t1.ok()) << t1.status().ToString();
  EXPECT_EQ((*t1)["refs"]["thaw-replay/j"], json::parse(R"({"snapshot-id":11,"type":"tag"})"));
  EXPECT_EQ((*t1)["current-snapshot-id"], 12);
  EXPECT_EQ((*t1)["snapshot-log"].size(), 2u);  // a tag is not main's history
  EXPECT_EQ(ApplyCommit(*t1, "/m/3.json", {TableRequirement::AssertRefSnapshotId("thaw-replay/j", std::nullopt)},
                        {TableUpdate::SetTag("thaw-replay/j", 12)}, 5000)
                .status()
                .code(),
            StatusCode::kCommitConflict);
  auto t2 = ApplyCommit(*t1, "/m/3.json", {TableRequirement::AssertRefSnapshotId("thaw-replay/j", 11)},
                        {TableUpdate::SetTag("thaw-replay/j", 12)}, 5000);
  ASSERT_TRUE(t2.ok()) << t2.status().ToString();
  EXPECT_EQ((*t2)["refs"]["thaw-replay/j"]["snapshot-id"], 12);
  auto t3 = ApplyCommit(*t2, "/m/4.json", {}, {TableUpdate::RemoveRef("thaw-replay/j")}, 6000);
  ASSERT_TRUE(t3.ok()) << t3.status().ToString();
  EXPECT_EQ((*t3)["refs"], json::parse(R"({"main":{"snapshot-id":12,"type":"branch"}})"));
  EXPECT_EQ((*t3)["current-snapshot-id"], 12);
  // Removing an absent ref is nothing; removing main is refused.
  EXPECT_TRUE(ApplyCommit(*t3, "/m/5.json", {}, {TableUpdate::RemoveRef("thaw-replay/j")}, 7000).ok());
  auto main = ApplyCommit(*t3, "/m/5.json", {}, {TableUpdate::RemoveRef("main")}, 7000);
  ASSERT_FALSE(main.ok());
  EXPECT_EQ(main.status().code(), StatusCode::kInvalidArgument);
}

TEST(TableUpdate, FailedRequirementsAreConflictsNamingBothSides) {
  auto created = NewTableMetadata(ArchiveCreate("/wh/t"), 1000);
  ASSERT_TRUE(created.ok());
  auto c1 = ApplyCommit(*created, "/m/0.json", {}, Append(MakeSnapshot(11, std::nullopt, 1, 2000)), 2000);
  ASSERT_TRUE(c1.ok());

  auto stale = ApplyCommit(*c1, "/m/1.json", {TableRequirement::AssertRefSnapshotId("main", std::nullopt)},
                           Append(MakeSnapshot(12, std::nullopt, 1, 3000)), 3000);
  ASSERT_EQ(stale.status().code(), StatusCode::kCommitConflict);
  EXPECT_NE(stale.status().message().find("expected ref 'main' at absent but it is at snapshot 11"), std::string::npos)
      << stale.status().message();

  auto moved = ApplyCommit(*c1, "/m/1.json", {TableRequirement::AssertRefSnapshotId("main", 10)}, {}, 3000);
  ASSERT_EQ(moved.status().code(), StatusCode::kCommitConflict);
  EXPECT_NE(moved.status().message().find("at snapshot 10 but it is at snapshot 11"), std::string::npos)
      << moved.status().message();

  auto uuid = ApplyCommit(*c1, "/m/1.json", {TableRequirement::AssertTableUuid("other-uuid")}, {}, 3000);
  ASSERT_EQ(uuid.status().code(), StatusCode::kCommitConflict);
  EXPECT_NE(uuid.status().message().find("expected table-uuid other-uuid but the table's is " +
                                         (*c1)["table-uuid"].get<std::string>()),
            std::string::npos)
      << uuid.status().message();

  TableRequirement create;
  create.kind = TableRequirement::Kind::kAssertCreate;
  EXPECT_EQ(ApplyCommit(*c1, "/m/1.json", {create}, {}, 1).status().code(), StatusCode::kCommitConflict);

  // Updates that cannot apply.
  EXPECT_EQ(ApplyCommit(*c1, "", {}, Append(MakeSnapshot(11, std::nullopt, 2, 1)), 1).status().code(),
            StatusCode::kInvalidArgument);  // id reused
  auto seq = ApplyCommit(*c1, "", {}, Append(MakeSnapshot(12, 11, 1, 1)), 1);
  EXPECT_EQ(seq.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(seq.status().message().find("sequence number 1 is not above"), std::string::npos);
  EXPECT_EQ(ApplyCommit(*c1, "", {}, {TableUpdate::SetBranch("main", 99)}, 1).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(TableUpdate, FormatV3AdvancesNextRowId) {
  auto created = NewTableMetadata(ArchiveCreate("/wh/t", 3), 1000);
  ASSERT_TRUE(created.ok());
  Snapshot s = MakeSnapshot(11, std::nullopt, 1, 2000);
  EXPECT_EQ(ApplyCommit(*created, "", {}, Append(s), 1).status().code(), StatusCode::kInvalidArgument);
  s.first_row_id = 0;
  s.added_rows = 25;
  auto c1 = ApplyCommit(*created, "", {}, Append(s), 1);
  ASSERT_TRUE(c1.ok()) << c1.status().ToString();
  EXPECT_EQ((*c1)["next-row-id"], 25);
  Snapshot behind = MakeSnapshot(12, 11, 2, 3000);
  behind.first_row_id = 20;
  behind.added_rows = 5;
  EXPECT_EQ(ApplyCommit(*c1, "", {}, Append(behind), 1).status().code(), StatusCode::kInvalidArgument);
  behind.first_row_id = 25;
  auto c2 = ApplyCommit(*c1, "", {}, Append(behind), 1);
  ASSERT_TRUE(c2.ok());
  EXPECT_EQ((*c2)["next-row-id"], 30);
  auto parsed = TableMetadata::Parse(c2->dump(), "v3");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->next_row_id, 30);
  EXPECT_EQ(parsed->CurrentSnapshot()->first_row_id, 25);
  EXPECT_EQ(parsed->CurrentSnapshot()->added_rows, 5);
}

TEST(TableUpdate, RemoveSnapshotsFollowsJavasSnapshotLogRule) {
  auto created = NewTableMetadata(ArchiveCreate("/wh/t"), 1000);
  ASSERT_TRUE(created.ok());
  json md = *created;
  for (int64_t i = 1; i <= 3; ++i) {
    auto next =
        ApplyCommit(md, "", {}, Append(MakeSnapshot(i, i == 1 ? std::optional<int64_t>() : i - 1, i, 1000 * i)), 1);
    ASSERT_TRUE(next.ok()) << next.status().ToString();
    md = *next;
  }
  md["refs"]["old"] = {{"snapshot-id", 2}, {"type", "tag"}};
  md["statistics"] = json::parse(R"([{"snapshot-id":2,"statistics-path":"/s2.puffin"},
                                     {"snapshot-id":3,"statistics-path":"/s3.puffin"}])");
  // s2 goes: its tag and statistics go, and the log keeps only what follows it.
  auto r = ApplyCommit(md, "", {}, {TableUpdate::RemoveSnapshots({2, 777})}, 9000);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)["snapshots"].size(), 2u);
  EXPECT_FALSE((*r)["refs"].contains("old"));
  EXPECT_EQ((*r)["statistics"].size(), 1u);
  EXPECT_EQ((*r)["snapshot-log"], json::parse(R"([{"timestamp-ms":3000,"snapshot-id":3}])"));
  EXPECT_EQ((*r)["current-snapshot-id"], 3);
  // Removing main's snapshot leaves the table without a current snapshot.
  auto all = ApplyCommit(*r, "", {}, {TableUpdate::RemoveSnapshots({1, 3})}, 9000);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ((*all)["current-snapshot-id"], -1);
  EXPECT_TRUE((*all)["refs"].empty());
  EXPECT_TRUE((*all)["snapshot-log"].empty());
  auto parsed = TableMetadata::Parse(all->dump(), "expired");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_FALSE(parsed->current_snapshot_id);
}

TEST(TableUpdate, MetadataLocationsAndIds) {
  std::regex name("/wh/t/metadata/(\\d+)-[0-9a-f-]{36}\\.metadata\\.json");
  std::smatch m;
  std::string first = NextMetadataLocation("/wh/t/", "");
  ASSERT_TRUE(std::regex_match(first, m, name)) << first;
  EXPECT_EQ(m[1], "00000");
  std::string next = NextMetadataLocation("/wh/t", "/wh/t/metadata/00007-0a.metadata.json");
  ASSERT_TRUE(std::regex_match(next, m, name)) << next;
  EXPECT_EQ(m[1], "00008");
  next = NextMetadataLocation("/wh/t", "s3://b/t/metadata/99999-x.metadata.json");
  ASSERT_TRUE(std::regex_match(next, m, name)) << next;
  EXPECT_EQ(m[1], "100000");
  next = NextMetadataLocation("/wh/t", "/wh/t/metadata/v3.metadata.json");
  ASSERT_TRUE(std::regex_match(next, m, name)) << next;
  EXPECT_EQ(m[1], "00001");

  std::set<int64_t> ids;
  std::set<std::string> uuids;
  for (int i = 0; i < 1000; ++i) {
    int64_t id = NewSnapshotId();
    EXPECT_GT(id, 0);
    ids.insert(id);
    uuids.insert(NewUuid());
  }
  EXPECT_EQ(ids.size(), 1000u);
  EXPECT_EQ(uuids.size(), 1000u);
}

// Metadata written here, read by pyiceberg's StaticTable.
TEST(TableUpdate, PyicebergLoadsCreatedAndCommittedMetadata) {
  const char* python = std::getenv("THAW_PYTHON");
  ASSERT_TRUE(python && *python) << "set THAW_PYTHON to the venv python with pyiceberg (make test does)";
  fs::path dir = fs::temp_directory_path() / ("thaw_table_update_" + std::to_string(::getpid()));
  fs::create_directories(dir / "metadata");
  struct Cleanup {
    fs::path d;
    ~Cleanup() { fs::remove_all(d); }
  } cleanup{dir};
  auto write = [&](const std::string& name, const json& md) {
    std::string path = (dir / "metadata" / name).string();
    std::ofstream(path) << md.dump();
    return path;
  };
  std::vector<std::string> files;
  std::vector<json> docs;
  for (int version : {2, 3}) {
    auto created = NewTableMetadata(ArchiveCreate(dir.string(), version), 1000);
    ASSERT_TRUE(created.ok());
    std::string p0 = write(fmt::format("v{}-00000.metadata.json", version), *created);
    Snapshot s = MakeSnapshot(4242 + version, std::nullopt, 1, 2000);
    s.summary["thaw.archive.next-offsets"] = R"({"t":{"0":10}})";
    if (version == 3) s.first_row_id = 0, s.added_rows = 10;
    auto c1 = ApplyCommit(*created, p0, {TableRequirement::AssertRefSnapshotId("main", std::nullopt)}, Append(s), 2500);
    ASSERT_TRUE(c1.ok()) << c1.status().ToString();
    files.push_back(p0);
    docs.push_back(*created);
    files.push_back(write(fmt::format("v{}-00001.metadata.json", version), *c1));
    docs.push_back(*c1);
  }
  std::string cmd =
      std::string("'") + python + "' '" + THAW_SOURCE_DIR + "/tests/unit/iceberg/load_metadata_pyiceberg.py'";
  for (const auto& f : files) cmd += " '" + f + "'";
  cmd += " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  ASSERT_EQ(pclose(pipe), 0) << out;
  std::istringstream lines(out);
  std::string line;
  size_t i = 0;
  for (; std::getline(lines, line); ++i) {
    ASSERT_LT(i, docs.size()) << out;
    json got = json::parse(line);
    const json& want = docs[i];
    SCOPED_TRACE(files[i]);
    EXPECT_EQ(got["format_version"], want["format-version"]);
    EXPECT_EQ(got["table_uuid"], want["table-uuid"]);
    EXPECT_EQ(got["last_column_id"], 10);
    EXPECT_EQ(got["last_partition_id"], 1000);
    EXPECT_EQ(got["default_sort_order_id"], 1);
    EXPECT_EQ(got["sort_order_ids"], json::parse("[0, 1]"));
    EXPECT_EQ(got["schema_field_ids"], json::parse("[1,2,3,4,5,6,7,8,9,10]"));
    EXPECT_EQ(got["spec_fields"], json::parse(R"([[1, 1000, "kafka_partition", "identity"]])"));
    EXPECT_EQ(got["properties"]["thaw.layout"], "thaw/1");
    if (want["snapshots"].empty()) {
      EXPECT_TRUE(got["current_snapshot_id"].is_null());
      EXPECT_TRUE(got["snapshots"].empty());
      EXPECT_EQ(got["last_sequence_number"], 0);
    } else {
      int64_t id = want["current-snapshot-id"];
      EXPECT_EQ(got["current_snapshot_id"], id);
      EXPECT_EQ(got["refs"]["main"], json::array({id, "branch"}));
      EXPECT_EQ(got["snapshots"][0]["operation"], "append");
      EXPECT_EQ(got["snapshots"][0]["summary"]["thaw.archive.next-offsets"], R"({"t":{"0":10}})");
      EXPECT_EQ(got["snapshots"][0]["seq"], 1);
      EXPECT_EQ(got["snapshot_log"], json::parse(fmt::format("[[{}, 2000]]", id)));
      EXPECT_EQ(got["metadata_log"], json::array({json::array({files[i - 1], 1000})}));
      EXPECT_EQ(got["last_sequence_number"], 1);
      if (want["format-version"] == 3) {
        EXPECT_EQ(got["next_row_id"], 10);
        EXPECT_EQ(got["snapshots"][0]["first_row_id"], 0);
        EXPECT_EQ(got["snapshots"][0]["added_rows"], 10);
      }
    }
  }
  EXPECT_EQ(i, docs.size()) << out;
}

}  // namespace
}  // namespace thaw::iceberg

namespace thaw::iceberg {
namespace {

// Schema evolution as archive --value-format registry commits it.
TEST(TableUpdate, AddSchemaAndSetCurrentSchema) {
  EXPECT_EQ(ToJson(TableRequirement::AssertCurrentSchemaId(3)),
            json::parse(R"({"type":"assert-current-schema-id","current-schema-id":3})"));
  EXPECT_EQ(ToJson(TableUpdate::SetCurrentSchema(-1)), json::parse(R"({"action":"set-current-schema","schema-id":-1})"));
  auto md = NewTableMetadata(ArchiveCreate("/wh/t"), 1000);
  ASSERT_TRUE(md.ok()) << md.status().ToString();
  ASSERT_EQ((*md)["last-column-id"], 10);
  json next = ArchiveSchema();
  next["schema-id"] = 1;
  next["fields"].push_back(json::parse(R"({"id": 11, "name": "extra", "required": false, "type": "string"})"));
  EXPECT_EQ(ToJson(TableUpdate::AddSchema(next, 11))["action"], "add-schema");
  EXPECT_EQ(ToJson(TableUpdate::AddSchema(next, 11))["last-column-id"], 11);

  auto applied = ApplyCommit(*md, "/wh/t/metadata/00000-a.metadata.json",
                             {TableRequirement::AssertCurrentSchemaId(0)},
                             {TableUpdate::AddSchema(next, 11), TableUpdate::SetCurrentSchema(-1)}, 2000);
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  EXPECT_EQ((*applied)["current-schema-id"], 1);
  EXPECT_EQ((*applied)["last-column-id"], 11);
  EXPECT_EQ((*applied)["schemas"].size(), 2u);
  auto parsed = TableMetadata::FromJson(*applied, "test");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->current_schema_id, 1);
  EXPECT_EQ(parsed->last_column_id, 11);
  EXPECT_NE(parsed->current_schema().FindById(11), nullptr);

  // The schema moved meanwhile: a conflict naming both ids.
  auto stale = ApplyCommit(*applied, "", {TableRequirement::AssertCurrentSchemaId(0)}, {}, 3000);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.status().code(), StatusCode::kCommitConflict);
  EXPECT_NE(stale.status().message().find("expected schema 0 but the table's is 1"), std::string::npos)
      << stale.status().message();
  // A schema id taken, a last-column-id going back, set-current-schema -1 without add-schema.
  EXPECT_EQ(ApplyCommit(*applied, "", {}, {TableUpdate::AddSchema(next, 11)}, 3000).status().code(),
            StatusCode::kInvalidArgument);
  next["schema-id"] = 2;
  EXPECT_EQ(ApplyCommit(*applied, "", {}, {TableUpdate::AddSchema(next, 5)}, 3000).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ApplyCommit(*applied, "", {}, {TableUpdate::SetCurrentSchema(-1)}, 3000).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ApplyCommit(*applied, "", {}, {TableUpdate::SetCurrentSchema(7)}, 3000).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace thaw::iceberg

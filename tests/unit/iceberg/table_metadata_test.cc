#include "thaw/iceberg/table_metadata.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "thaw/iceberg/table_scan.h"
#include "thaw/iceberg/transform.h"

namespace thaw::iceberg {
namespace {

std::string Resource(const std::string& name) {
  std::ifstream in(std::string(THAW_SOURCE_DIR) + "/tests/unit/iceberg/resources/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TableMetadata Good() {
  auto md = TableMetadata::Parse(Resource("v2_two_snapshots.metadata.json"), "v2.json");
  EXPECT_TRUE(md.ok()) << md.status().ToString();
  return *md;
}

TEST(TableMetadata, ParsesSchemasSpecsSnapshotsAndRefs) {
  TableMetadata md = Good();
  EXPECT_EQ(md.format_version, 2);
  EXPECT_EQ(md.schemas.size(), 2u);
  EXPECT_EQ(md.current_schema().schema_id(), 1);
  // Field ids survive renames: id 2 is "off" now, "kafka_offset" in schema 0.
  EXPECT_EQ(md.current_schema().FindById(2)->name, "off");
  EXPECT_EQ(md.SchemaById(0)->FindById(2)->name, "kafka_offset");
  const NestedField* tags = md.current_schema().FindById(4);
  ASSERT_NE(tags, nullptr);
  EXPECT_EQ(tags->type->ToString(), "map<string, decimal(10,2)>");
  EXPECT_EQ(md.current_schema().PathOf(6), "tags.value");
  ASSERT_EQ(md.specs.size(), 2u);
  EXPECT_EQ(md.SpecById(1)->fields[1].transform.kind, TransformKind::kBucket);
  EXPECT_EQ(md.SpecById(1)->fields[1].transform.param, 16);
  EXPECT_EQ(md.CurrentSnapshot()->snapshot_id, 222);
  EXPECT_EQ(md.SchemaFor(*md.SnapshotById(111)).schema_id(), 0);
}

TEST(TableMetadata, SelectsSnapshotsByIdRefAndTime) {
  TableMetadata md = Good();
  SnapshotSelector by_ref;
  by_ref.ref = "before";
  EXPECT_EQ((*SelectSnapshot(md, by_ref))->snapshot_id, 111);
  SnapshotSelector as_of;
  as_of.as_of_ms = 1700000150000;
  EXPECT_EQ((*SelectSnapshot(md, as_of))->snapshot_id, 111);
  as_of.as_of_ms = 1700000200000;
  EXPECT_EQ((*SelectSnapshot(md, as_of))->snapshot_id, 222);
  as_of.as_of_ms = 1;
  auto early = SelectSnapshot(md, as_of);
  ASSERT_FALSE(early.ok());
  EXPECT_NE(early.status().message().find("no snapshot was current"), std::string::npos);
  SnapshotSelector missing;
  missing.snapshot_id = 5;
  EXPECT_EQ(SelectSnapshot(md, missing).status().code(), StatusCode::kNotFound);
  SnapshotSelector bad_ref;
  bad_ref.ref = "nope";
  auto r = SelectSnapshot(md, bad_ref);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("refs: before, main"), std::string::npos) << r.status().message();
}

struct BrokenCase {
  const char* file;
  const char* expected;
};

class BrokenMetadata : public ::testing::TestWithParam<BrokenCase> {};

TEST_P(BrokenMetadata, FailsWithASpecificError) {
  auto md = TableMetadata::Parse(Resource(GetParam().file), GetParam().file);
  ASSERT_FALSE(md.ok());
  EXPECT_NE(md.status().message().find(GetParam().file), std::string::npos) << md.status().message();
  EXPECT_NE(md.status().message().find(GetParam().expected), std::string::npos) << md.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, BrokenMetadata,
    ::testing::Values(
        BrokenCase{"broken_format_v4.metadata.json", "format-version 4 (Thaw reads Iceberg format versions 1 to 3)"},
        BrokenCase{"broken_missing_current_snapshot.metadata.json", "current-snapshot-id 999 is not among the snapshots"},
        BrokenCase{"broken_schema_id.metadata.json", "current-schema-id 7 is not among the schemas"},
        BrokenCase{"broken_unknown_type.metadata.json", "unknown Iceberg type 'varchar'"},
        BrokenCase{"broken_truncated.metadata.json", "not valid JSON"}));

TEST(Transform, BucketMatchesSpecVectors) {
  // Spec Appendix B test vectors.
  EXPECT_EQ(Murmur3_32(std::string_view("iceberg")), 1210000089);
  int64_t v = 34;
  EXPECT_EQ(Murmur3_32(std::string_view(reinterpret_cast<const char*>(&v), 8)), 2017239379);
  EXPECT_EQ(BucketLong(34, 16), (2017239379 & 0x7fffffff) % 16);
}

TEST(Transform, ParsesAndAppliesTimeTransforms) {
  EXPECT_EQ(Transform::Parse("truncate[10]").param, 10);
  EXPECT_EQ(Transform::Parse("bucket[x]").kind, TransformKind::kUnknown);
  EXPECT_EQ(Transform::Parse("zorder").kind, TransformKind::kUnknown);
  const int64_t us_2017_11_16 = 1510790400LL * 1'000'000;  // 2017-11-16T00:00:00Z
  EXPECT_EQ(*ApplyToLong(Transform::Parse("day"), us_2017_11_16, false, false), 17486);
  EXPECT_EQ(*ApplyToLong(Transform::Parse("month"), us_2017_11_16, false, false), (2017 - 1970) * 12 + 10);
  EXPECT_EQ(*ApplyToLong(Transform::Parse("year"), us_2017_11_16, false, false), 47);
  EXPECT_EQ(*ApplyToLong(Transform::Parse("hour"), us_2017_11_16 - 1, false, false), 17486 * 24 - 1);
  EXPECT_EQ(*ApplyToLong(Transform::Parse("truncate[10]"), -1, false, false), -10);
}

TEST(TableScan, PrunesFilesByPartitionAndOffsetBounds) {
  TableMetadata md = Good();
  ScanFilter f;
  f.Intersect(1, {3, 3});      // partition 3
  f.Intersect(2, {100, {}});   // offset >= 100
  auto scan = TableScan::Make(nullptr, &md, md.CurrentSnapshot(), f);
  ASSERT_TRUE(scan.ok());
  DataFile file;
  file.spec_id = 0;
  Datum p3; p3.kind = Datum::kInt; p3.i = 3;
  Datum p4 = p3; p4.i = 4;
  file.partition = {p3};
  auto le = [](int64_t v) { return std::string(reinterpret_cast<const char*>(&v), 8); };
  file.lower_bounds[2] = le(0);
  file.upper_bounds[2] = le(99);
  EXPECT_TRUE(scan->PartitionMayMatch(file));
  EXPECT_FALSE(scan->MetricsMayMatch(file));  // offsets 0..99 < 100
  file.upper_bounds[2] = le(100);
  EXPECT_TRUE(scan->MetricsMayMatch(file));
  file.partition = {p4};
  EXPECT_FALSE(scan->PartitionMayMatch(file));
  // Spec 1 buckets the offset: a point lookup prunes other buckets.
  ScanFilter point;
  point.Intersect(2, {7, 7});
  auto scan2 = TableScan::Make(nullptr, &md, md.CurrentSnapshot(), point);
  DataFile bucketed;
  bucketed.spec_id = 1;
  Datum b; b.kind = Datum::kInt; b.i = BucketLong(7, 16);
  bucketed.partition = {p3, b};
  EXPECT_TRUE(scan2->PartitionMayMatch(bucketed));
  bucketed.partition[1].i = (b.i + 1) % 16;
  EXPECT_FALSE(scan2->PartitionMayMatch(bucketed));
}

TEST(DeleteFileIndex, AppliesSequenceNumberRules) {
  TableMetadata md = Good();
  DeleteFileIndex index;
  Datum p0; p0.kind = Datum::kInt; p0.i = 0;
  auto entry = [&](FileContent c, int64_t seq, const char* path) {
    ManifestEntry e;
    e.sequence_number = seq;
    e.file.content = c;
    e.file.path = path;
    e.file.format = "parquet";
    e.file.spec_id = 0;
    e.file.partition = {p0};
    return e;
  };
  index.Add(entry(FileContent::kPositionDeletes, 5, "pos5"), md);
  index.Add(entry(FileContent::kEqualityDeletes, 5, "eq5"), md);
  DataFile data;
  data.path = "d";
  data.spec_id = 0;
  data.partition = {p0};
  // Data written at seq 5: position delete at 5 applies, equality delete at 5 does not.
  auto at5 = index.ForDataFile(data, 5, md);
  ASSERT_EQ(at5.size(), 1u);
  EXPECT_EQ(at5[0]->path, "pos5");
  EXPECT_EQ(index.ForDataFile(data, 4, md).size(), 2u);
  EXPECT_EQ(index.ForDataFile(data, 6, md).size(), 0u);
  // Another partition: neither applies.
  data.partition[0].i = 1;
  EXPECT_EQ(index.ForDataFile(data, 4, md).size(), 0u);
}

}  // namespace
}  // namespace thaw::iceberg

#include "thaw/archive/maintain_plan.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>

namespace thaw::archive {
namespace {

constexpr int64_t kTarget = 1000;  // small: < 750

CompactionInput File(std::string path, int64_t lo, int64_t hi, int64_t size, int64_t seq = 1) {
  CompactionInput f;
  f.path = std::move(path);
  f.has_offset_bounds = true;
  f.offset_lo = lo;
  f.offset_hi = hi;
  f.file_size = size;
  f.record_count = hi - lo + 1;
  f.data_sequence_number = seq;
  return f;
}

std::vector<std::vector<std::string>> Paths(const std::vector<CompactionInput>& files,
                                            const std::vector<CompactionGroup>& groups) {
  std::vector<std::vector<std::string>> out;
  for (const auto& g : groups) {
    out.emplace_back();
    for (size_t i : g.inputs) out.back().push_back(files[i].path);
  }
  return out;
}

TEST(PlanCompactionGroups, PacksSmallFilesInOffsetOrderUpToTheTarget) {
  // Given out of order: grouping follows offsets, not the input order.
  std::vector<CompactionInput> files = {File("c", 20, 29, 300, 3), File("a", 0, 9, 300, 1), File("b", 10, 19, 300, 2),
                                        File("d", 30, 39, 300, 4), File("e", 40, 49, 300, 5)};
  auto groups = PlanCompactionGroups(files, kTarget);
  // 300 * 3 = 900 <= 1000; the fourth would make 1200: a new group.
  EXPECT_EQ(Paths(files, groups), (std::vector<std::vector<std::string>>{{"a", "b", "c"}, {"d", "e"}}));
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].offset_lo, 0);
  EXPECT_EQ(groups[0].offset_hi, 29);
  EXPECT_EQ(groups[0].bytes, 900);
  EXPECT_EQ(groups[0].records, 30);
  EXPECT_EQ(groups[0].max_data_sequence_number, 3);
  EXPECT_EQ(groups[1].offset_lo, 30);
  EXPECT_EQ(groups[1].offset_hi, 49);
}

TEST(PlanCompactionGroups, BigFilesUnrewritableFilesAndOverlapsBreakRuns) {
  std::vector<CompactionInput> files = {
      File("a", 0, 9, 100),   File("b", 10, 19, 100),   File("big", 20, 29, 800),  // not small (>= 750): breaks the run
      File("c", 30, 39, 100), File("d", 40, 49, 100),   File("keep", 50, 59, 100),  // not rewritable
      File("e", 60, 69, 100), File("f", 70, 79, 100),   File("g", 80, 95, 100),     // overlaps h
      File("h", 90, 99, 100), File("i", 100, 109, 100), File("j", 110, 119, 100),
  };
  files[5].rewritable = false;
  auto groups = PlanCompactionGroups(files, kTarget);
  EXPECT_EQ(Paths(files, groups),
            (std::vector<std::vector<std::string>>{{"a", "b"}, {"c", "d"}, {"e", "f"}, {"i", "j"}}));
}

TEST(PlanCompactionGroups, FilesWithDeletesJoinRuns) {
  // The rewrite applies their deletes: they are grouped like any small file.
  std::vector<CompactionInput> files = {File("a", 0, 9, 100), File("del", 10, 19, 100), File("b", 20, 29, 100)};
  files[1].has_deletes = true;
  EXPECT_EQ(Paths(files, PlanCompactionGroups(files, kTarget)),
            (std::vector<std::vector<std::string>>{{"a", "del", "b"}}));
}

TEST(FileSortOrderId, OnlyOrdersEveryArchivedFileSatisfies) {
  auto md = [](int id, const std::string& fields) {
    return fmt::format(R"({{"default-sort-order-id": {}, "sort-orders": [{{"order-id": 0, "fields": []}},
                           {{"order-id": 1, "fields": [{}]}}]}})",
                       id, fields);
  };
  auto f = [](int src, const char* transform = "identity", const char* dir = "asc") {
    return fmt::format(R"({{"transform": "{}", "source-id": {}, "direction": "{}", "null-order": "nulls-first"}})",
                       transform, src, dir);
  };
  EXPECT_EQ(FileSortOrderId(md(1, f(1) + "," + f(2))), 1);
  EXPECT_EQ(FileSortOrderId(md(1, f(11) + "," + f(1) + "," + f(2))), 1);
  EXPECT_FALSE(FileSortOrderId(md(0, f(1) + "," + f(2))));  // the table is unsorted
  EXPECT_FALSE(FileSortOrderId(md(1, f(2, "identity", "desc"))));
  EXPECT_FALSE(FileSortOrderId(md(1, f(2) + "," + f(1))));  // offset not last
  EXPECT_FALSE(FileSortOrderId(md(1, f(3))));               // timestamps are not ordered in a file
  EXPECT_FALSE(FileSortOrderId(md(1, f(1, "bucket[4]"))));
  EXPECT_FALSE(FileSortOrderId("not json"));
}

TEST(PlanCompactionGroups, SingleFilesAndTablesWithoutBoundsAreLeft) {
  std::vector<CompactionInput> one = {File("a", 0, 9, 100), File("big", 10, 19, 900), File("b", 20, 29, 100)};
  EXPECT_TRUE(PlanCompactionGroups(one, kTarget).empty());
  std::vector<CompactionInput> unbounded = {File("a", 0, 9, 100), File("b", 10, 19, 100), File("x", 0, 0, 100)};
  unbounded[2].has_offset_bounds = false;  // may hold any offset: nothing is safe to read by range
  EXPECT_TRUE(PlanCompactionGroups(unbounded, kTarget).empty());
  EXPECT_TRUE(PlanCompactionGroups({}, kTarget).empty());
}

TEST(PlanCompactionGroups, AFileContainedInAnotherBreaksBoth) {
  std::vector<CompactionInput> files = {File("a", 0, 9, 100), File("wide", 10, 100, 100), File("in", 20, 30, 100),
                                        File("b", 101, 110, 100), File("c", 111, 120, 100)};
  EXPECT_EQ(Paths(files, PlanCompactionGroups(files, kTarget)), (std::vector<std::vector<std::string>>{{"b", "c"}}));
}

std::shared_ptr<const iceberg::Snapshot> Snap(int64_t id, std::optional<int64_t> parent, int64_t ts) {
  iceberg::Snapshot s;
  s.snapshot_id = id;
  s.parent_snapshot_id = parent;
  s.timestamp_ms = ts;
  s.sequence_number = id;
  return std::make_shared<const iceberg::Snapshot>(std::move(s));
}

TEST(SnapshotsToExpire, KeepsCurrentRefHeadsAndTheNewestOnMain) {
  iceberg::TableMetadata md;
  md.snapshots = {Snap(1, std::nullopt, 100),
                  Snap(2, 1, 200),
                  Snap(3, 2, 300),
                  Snap(4, 3, 400),
                  Snap(5, 4, 500),
                  Snap(6, 2, 250)};  // 6: head of branch "b" off 2
  md.current_snapshot_id = 5;
  md.refs["main"] = {5, "branch"};
  md.refs["b"] = {6, "branch"};
  md.refs["t"] = {1, "tag"};
  // Everything is older than the cutoff: kept are 5 (current, main), 6 and 1 (ref heads).
  EXPECT_EQ(SnapshotsToExpire(md, 1000, 1), (std::vector<int64_t>{2, 3, 4}));
  // retain_last 3: 5, 4, 3 of main's ancestry too.
  EXPECT_EQ(SnapshotsToExpire(md, 1000, 3), (std::vector<int64_t>{2}));
  // Only snapshots older than the cutoff: 2 (200) goes, 3 (300) and 4 (400) are too new.
  EXPECT_EQ(SnapshotsToExpire(md, 300, 1), (std::vector<int64_t>{2}));
  EXPECT_TRUE(SnapshotsToExpire(md, 0, 1).empty());
  iceberg::TableMetadata empty;
  EXPECT_TRUE(SnapshotsToExpire(empty, 1000, 1).empty());
}

TEST(SnapshotsToExpire, KeepsWhatAReplayJobStillHasToReadAfterItsTag) {
  iceberg::TableMetadata md;
  md.snapshots = {Snap(1, std::nullopt, 100),
                  Snap(2, 1, 200),
                  Snap(3, 2, 300),
                  Snap(4, 3, 400),
                  Snap(5, 4, 500),
                  Snap(6, 2, 250),
                  Snap(7, 6, 260)};  // 6, 7: branch "b" off 2
  md.current_snapshot_id = 5;
  md.refs["main"] = {5, "branch"};
  md.refs["b"] = {7, "branch"};
  md.refs["thaw-replay/follower"] = {3, "tag"};  // replayed up to 3: still has to read 4 and 5
  std::map<std::string, int64_t> held;
  EXPECT_EQ(SnapshotsToExpire(md, 1000, 1, &held), (std::vector<int64_t>{1, 2, 6}));
  EXPECT_EQ(held, (std::map<std::string, int64_t>{{"follower", 1}}));  // 4 (5 is main's head anyway)
  // A job on branch b, at 2: 6 is what it reads next (7 is b's head); main's 3, 4 are not its.
  md.refs.erase("thaw-replay/follower");
  md.refs["thaw-replay/on-b"] = {2, "tag"};
  held.clear();
  EXPECT_EQ(SnapshotsToExpire(md, 1000, 1, &held), (std::vector<int64_t>{1}));
  // 3 and 4 are on main after 2 too: a tag keeps what every branch descending from it reads.
  EXPECT_EQ(held, (std::map<std::string, int64_t>{{"on-b", 3}}));
  // A tag named like a job's but a branch, or another prefix, keeps only its own head.
  md.refs.erase("thaw-replay/on-b");
  md.refs["thaw-replay-x"] = {2, "tag"};
  md.refs["thaw-replay/b2"] = {2, "branch"};
  EXPECT_EQ(SnapshotsToExpire(md, 1000, 1), (std::vector<int64_t>{1, 3, 4, 6}));
}

TEST(FilesOnlyIn, ContentFilesThenManifestsThenLists) {
  ReachableFiles before, after;
  before.manifest_lists = {"/t/metadata/snap-1.avro", "/t/metadata/snap-2.avro"};
  before.manifests = {"/t/metadata/m1.avro", "/t/metadata/m2.avro"};
  before.content_files = {"/t/data/a.parquet", "/t/data/b.parquet"};
  after.manifest_lists = {"/t/metadata/snap-2.avro", "/t/metadata/snap-3.avro"};
  after.manifests = {"/t/metadata/m2.avro"};
  after.content_files = {"/t/data/b.parquet", "/t/data/c.parquet"};
  EXPECT_EQ(FilesOnlyIn(before, after),
            (std::vector<std::string>{"/t/data/a.parquet", "/t/metadata/m1.avro", "/t/metadata/snap-1.avro"}));
  EXPECT_TRUE(FilesOnlyIn(after, after).empty());
}

TEST(NormalizeLocation, SchemesAndSlashes) {
  EXPECT_EQ(NormalizeLocation("file:///wh/t/data/a.parquet"), "/wh/t/data/a.parquet");
  EXPECT_EQ(NormalizeLocation("file:/wh/t/data/a.parquet"), "/wh/t/data/a.parquet");
  EXPECT_EQ(NormalizeLocation("/wh//t/data/a.parquet"), "/wh/t/data/a.parquet");
  EXPECT_EQ(NormalizeLocation("s3a://bucket/wh/t/x"), "s3://bucket/wh/t/x");
  EXPECT_EQ(NormalizeLocation("s3://bucket//wh/t/x"), "s3://bucket/wh/t/x");
  EXPECT_NE(NormalizeLocation("s3://bucket/wh/t/x"), NormalizeLocation("gs://bucket/wh/t/x"));
}

TEST(FindOrphans, UnreferencedAndOldOnly) {
  std::vector<ListedFile> listed = {
      {"file:///t/data/kept.parquet", 10, 100},    // referenced (written without the scheme)
      {"file:///t/data/orphan.parquet", 10, 100},  // old, unreferenced: an orphan
      {"file:///t/data/new.parquet", 10, 5000},    // unreferenced but inside the window
      {"file:///t/metadata/00001-x.metadata.json", 1, 100},
  };
  std::set<std::string> referenced = {NormalizeLocation("/t/data/kept.parquet"),
                                      NormalizeLocation("/t/metadata/00001-x.metadata.json")};
  auto orphans = FindOrphans(listed, referenced, 1000);
  ASSERT_EQ(orphans.size(), 1u);
  EXPECT_EQ(orphans[0].location, "file:///t/data/orphan.parquet");
}

}  // namespace
}  // namespace thaw::archive

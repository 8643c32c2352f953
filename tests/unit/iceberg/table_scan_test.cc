// Incremental append planning (TableScan::OnlyAddedIn, used by --follow) on a
// table whose manifests pyiceberg merged: files appended by earlier snapshots
// are EXISTING in the current one and must still be found through the
// snapshots that added them. Set THAW_PYTHON to a python with pyiceberg.
#include "thaw/iceberg/table_scan.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "python_fixture.h"
#include "thaw/catalog/catalog.h"

namespace thaw::iceberg {
namespace {

namespace fs = std::filesystem;

class IncrementalAppendScan : public ::testing::Test {
 protected:
  void SetUp() override {
    auto f = testing::RunPythonFixture("tests/unit/iceberg/make_follow_fixture.py", "thaw_follow_fixture_");
    if (!f.skip.empty()) GTEST_SKIP() << f.skip;
    ASSERT_TRUE(f.error.empty()) << f.error;
    dir_ = f.dir;
    info_ = std::move(f.info);
    auto table = catalog::LoadTableFromMetadata(info_["metadata"].get<std::string>());
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    table_ = std::move(*table);
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  int64_t Snap(int i) const { return info_["snapshots"][i].get<int64_t>(); }
  int64_t Rows(int i) const { return info_["rows"][i].get<int64_t>(); }

  Result<std::vector<FileScanTask>> Plan(const Snapshot* at, std::set<int64_t> added_in) {
    ASSIGN_OR_RAISE(auto scan, TableScan::Make(table_.io, &table_.metadata, at, {}));
    scan.OnlyAddedIn(std::move(added_in));
    return scan.PlanFiles();
  }

  fs::path dir_;
  nlohmann::json info_;
  iceberg::Table table_;
};

TEST_F(IncrementalAppendScan, FindsFilesWhoseEntriesAMergeMadeExisting) {
  const Snapshot* current = table_.metadata.CurrentSnapshot();
  ASSERT_NE(current, nullptr);
  ASSERT_EQ(current->snapshot_id, Snap(2));

  // Precondition: the current snapshot lists the first two appends' files as
  // EXISTING in one merged manifest (what made --follow skip them).
  auto manifests = ReadManifestList(*table_.io, table_.metadata, *current);
  ASSERT_TRUE(manifests.ok()) << manifests.status().ToString();
  ASSERT_EQ(manifests->size(), 1u);
  auto entries = ReadManifest(*table_.io, table_.metadata, (*manifests)[0]);
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  std::map<int64_t, EntryStatus> status_by_snapshot;
  for (const auto& e : *entries) status_by_snapshot[e.snapshot_id] = e.status;
  EXPECT_EQ(status_by_snapshot[Snap(0)], EntryStatus::kExisting);
  EXPECT_EQ(status_by_snapshot[Snap(1)], EntryStatus::kExisting);
  EXPECT_EQ(status_by_snapshot[Snap(2)], EntryStatus::kAdded);

  // Appends 1 and 2, seen from the current snapshot: both files, once each,
  // with the data sequence numbers of the snapshots that added them.
  auto tasks = Plan(current, {Snap(1), Snap(2)});
  ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
  ASSERT_EQ(tasks->size(), 2u);
  std::map<int64_t, int64_t> rows_by_seq;
  std::set<std::string> paths;
  for (const auto& t : *tasks) {
    rows_by_seq[t.data_sequence_number] += t.file->record_count;
    paths.insert(t.file->path);
  }
  EXPECT_EQ(paths.size(), 2u);
  const Snapshot* s1 = table_.metadata.SnapshotById(Snap(1));
  ASSERT_NE(s1, nullptr);
  EXPECT_EQ(rows_by_seq, (std::map<int64_t, int64_t>{{s1->sequence_number, Rows(1)},
                                                     {current->sequence_number, Rows(2)}}));

  // The first append alone, two merges later.
  tasks = Plan(current, {Snap(0)});
  ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
  ASSERT_EQ(tasks->size(), 1u);
  EXPECT_EQ((*tasks)[0].file->record_count, Rows(0));

  // Nothing asked, nothing planned.
  tasks = Plan(current, {});
  ASSERT_TRUE(tasks.ok());
  EXPECT_TRUE(tasks->empty());
}

TEST_F(IncrementalAppendScan, AMissingManifestListIsAnErrorNotAGap) {
  fs::remove(info_["manifest_lists"][1].get<std::string>());
  auto tasks = Plan(table_.metadata.CurrentSnapshot(), {Snap(1), Snap(2)});
  ASSERT_FALSE(tasks.ok());
  EXPECT_EQ(tasks.status().code(), StatusCode::kNotFound);
  const std::string msg = tasks.status().message();
  EXPECT_NE(msg.find(std::to_string(Snap(1))), std::string::npos) << msg;
  EXPECT_NE(msg.find("cannot continue without loss"), std::string::npos) << msg;
  // Appends whose lists are there still plan.
  auto later = Plan(table_.metadata.CurrentSnapshot(), {Snap(2)});
  ASSERT_TRUE(later.ok()) << later.status().ToString();
  EXPECT_EQ(later->size(), 1u);
}

TEST_F(IncrementalAppendScan, AppendsMustBeAncestorsOfTheScannedSnapshot) {
  auto tasks = Plan(table_.metadata.SnapshotById(Snap(1)), {Snap(2)});
  ASSERT_FALSE(tasks.ok());
  EXPECT_NE(tasks.status().message().find("not an ancestor"), std::string::npos) << tasks.status().ToString();
}

// An index built over several snapshots may hold a deletion vector and the
// one that replaced it (which holds every position of the old one): the
// newest applicable DV is the one attached, whatever the order added.
TEST(DeleteFileIndex, AttachesTheNewestDeletionVector) {
  TableMetadata md;
  auto dv = [](int64_t seq, int64_t offset) {
    ManifestEntry e;
    e.sequence_number = seq;
    e.file.content = FileContent::kPositionDeletes;
    e.file.format = "puffin";
    e.file.path = "deletes.puffin";
    e.file.referenced_data_file = "data.parquet";
    e.file.content_offset = offset;
    return e;
  };
  DataFile data;
  data.path = "data.parquet";
  for (bool newest_first : {false, true}) {
    DeleteFileIndex index;
    index.Add(dv(newest_first ? 5 : 3, newest_first ? 40 : 4), md);
    index.Add(dv(newest_first ? 3 : 5, newest_first ? 4 : 40), md);
    auto got = index.ForDataFile(data, 2, md);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0]->content_offset, 40) << "newest_first=" << newest_first;
    // Data written after the older DV: only the newer one may apply.
    got = index.ForDataFile(data, 4, md);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0]->content_offset, 40);
  }
}

// The spec's matching rules, through the index: partition (spec id and
// tuple), global equality deletes, sequence numbers, referenced files and
// file_path bounds, and a DV replacing position delete files.
class DeleteFileIndexRules : public ::testing::Test {
 protected:
  void SetUp() override {
    PartitionSpec unpartitioned;
    unpartitioned.spec_id = 0;
    PartitionSpec by_partition;
    by_partition.spec_id = 1;
    PartitionField f;
    f.source_ids = {1};
    f.field_id = 1000;
    f.name = "kafka_partition";
    by_partition.fields.push_back(f);
    PartitionSpec by_partition_again = by_partition;  // same tuple shape, another spec id
    by_partition_again.spec_id = 2;
    md_.specs = {unpartitioned, by_partition, by_partition_again};
    data_.path = "s3://b/t/data/p=0/a.parquet";
    data_.spec_id = 1;
    data_.partition = {Int(0)};
  }
  static Datum Int(int64_t v) {
    Datum d;
    d.kind = Datum::kInt;
    d.i = v;
    return d;
  }
  ManifestEntry Delete(std::string name, FileContent content, int64_t seq, int32_t spec_id,
                       std::vector<Datum> partition) {
    ManifestEntry e;
    e.sequence_number = seq;
    e.file.content = content;
    e.file.format = "parquet";
    e.file.path = std::move(name);
    e.file.spec_id = spec_id;
    e.file.partition = std::move(partition);
    if (content == FileContent::kEqualityDeletes) e.file.equality_ids = {2};
    return e;
  }
  std::set<std::string> Matches(const DeleteFileIndex& index, int64_t data_seq, int64_t* candidates = nullptr) {
    std::set<std::string> out;
    for (const auto& d : index.ForDataFile(data_, data_seq, md_, candidates)) {
      out.insert(d->path + (d->content_offset ? "#" + std::to_string(*d->content_offset) : ""));
    }
    return out;
  }
  TableMetadata md_;
  DataFile data_;
};

TEST_F(DeleteFileIndexRules, FollowsTheSpec) {
  constexpr int32_t kFilePath = 2147483546;
  DeleteFileIndex index;
  const auto P = FileContent::kPositionDeletes;
  const auto E = FileContent::kEqualityDeletes;
  index.Add(Delete("pos-same-seq", P, 5, 1, {Int(0)}), md_);         // seq == data seq: applies
  index.Add(Delete("pos-older", P, 4, 1, {Int(0)}), md_);            // written before the data
  index.Add(Delete("pos-other-partition", P, 9, 1, {Int(1)}), md_);
  index.Add(Delete("pos-other-spec", P, 9, 2, {Int(0)}), md_);       // same tuple, other spec
  index.Add(Delete("pos-unpartitioned", P, 9, 0, {}), md_);          // position deletes are never global
  auto ref = Delete("pos-ref-other", P, 9, 1, {Int(0)});
  ref.file.referenced_data_file = "s3://b/t/data/p=0/b.parquet";
  index.Add(ref, md_);
  ref = Delete("pos-ref-this", P, 9, 1, {Int(0)});
  ref.file.referenced_data_file = data_.path;
  index.Add(ref, md_);
  auto bounds = Delete("pos-bounds-single-other", P, 9, 1, {Int(0)});
  bounds.file.lower_bounds[kFilePath] = bounds.file.upper_bounds[kFilePath] = "s3://b/t/data/p=0/c.parquet";
  index.Add(bounds, md_);
  bounds = Delete("pos-bounds-single-this", P, 9, 1, {Int(0)});
  bounds.file.lower_bounds[kFilePath] = bounds.file.upper_bounds[kFilePath] = data_.path;
  index.Add(bounds, md_);
  bounds = Delete("pos-bounds-around", P, 9, 1, {Int(0)});
  bounds.file.lower_bounds[kFilePath] = "s3://b/t/data/p=0/0";
  bounds.file.upper_bounds[kFilePath] = "s3://b/t/data/p=0/z";
  index.Add(bounds, md_);
  bounds = Delete("pos-bounds-past", P, 9, 1, {Int(0)});
  bounds.file.lower_bounds[kFilePath] = "s3://b/t/data/p=0/b";
  bounds.file.upper_bounds[kFilePath] = "s3://b/t/data/p=0/z";
  index.Add(bounds, md_);
  index.Add(Delete("eq-same-seq", E, 5, 1, {Int(0)}), md_);          // must be strictly newer
  index.Add(Delete("eq-newer", E, 6, 1, {Int(0)}), md_);
  index.Add(Delete("eq-other-partition", E, 6, 1, {Int(1)}), md_);
  index.Add(Delete("eq-other-spec", E, 6, 2, {Int(0)}), md_);
  index.Add(Delete("eq-global", E, 6, 0, {}), md_);                  // unpartitioned spec: all files
  index.Add(Delete("eq-global-older", E, 5, 0, {}), md_);
  EXPECT_EQ(index.size(), 17u);

  const std::set<std::string> want = {"pos-same-seq", "pos-ref-this", "pos-bounds-single-this", "pos-bounds-around",
                                      "eq-newer", "eq-global"};
  EXPECT_EQ(Matches(index, 5), want);

  // A deletion vector for the file replaces its position delete files, not
  // its equality deletes; one for another file or written earlier does not.
  auto dv = [&](std::string path, int64_t seq, int64_t offset) {
    auto e = Delete("dv.puffin", P, seq, 1, {Int(0)});
    e.file.format = "puffin";
    e.file.referenced_data_file = std::move(path);
    e.file.content_offset = offset;
    return e;
  };
  index.Add(dv("s3://b/t/data/p=0/b.parquet", 9, 4), md_);
  index.Add(dv(data_.path, 4, 40), md_);
  EXPECT_EQ(Matches(index, 5), want);
  index.Add(dv(data_.path, 7, 400), md_);
  EXPECT_EQ(Matches(index, 5), (std::set<std::string>{"dv.puffin#400", "eq-newer", "eq-global"}));
}

// Matching one data file looks only at the delete files of its partition and
// path (and global ones), not at every delete file of the table.
TEST_F(DeleteFileIndexRules, MatchingLooksOnlyAtCandidates) {
  DeleteFileIndex index;
  for (int p = 0; p < 500; ++p) {
    index.Add(Delete("eq-" + std::to_string(p), FileContent::kEqualityDeletes, 9, 1, {Int(p)}), md_);
    index.Add(Delete("pos-" + std::to_string(p), FileContent::kPositionDeletes, 9, 1, {Int(p)}), md_);
    auto ref = Delete("ref-" + std::to_string(p), FileContent::kPositionDeletes, 9, 1, {Int(0)});
    ref.file.referenced_data_file = "s3://b/t/data/p=0/other-" + std::to_string(p) + ".parquet";
    index.Add(ref, md_);
  }
  int64_t candidates = 0;
  EXPECT_EQ(Matches(index, 5, &candidates), (std::set<std::string>{"eq-0", "pos-0"}));
  EXPECT_EQ(candidates, 2);
}

}  // namespace
}  // namespace thaw::iceberg

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

#include "thaw/storage/catalog.h"

namespace thaw::iceberg {
namespace {

namespace fs = std::filesystem;

class IncrementalAppendScan : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* python = std::getenv("THAW_PYTHON");
    if (python == nullptr || *python == '\0') GTEST_SKIP() << "THAW_PYTHON is not set";
    char tmpl[] = "/tmp/thaw_follow_fixture_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    const fs::path script = fs::path(THAW_SOURCE_DIR) / "tests/unit/iceberg/make_follow_fixture.py";
    const std::string cmd = std::string("'") + python + "' '" + script.string() + "' '" + dir_.string() + "'";
    FILE* pipe = popen(cmd.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string out;
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
    int rc = pclose(pipe);
    if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77) GTEST_SKIP() << "pyiceberg not available to " << python;
    ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << cmd << "\n" << out;
    info_ = nlohmann::json::parse(out, nullptr, false);
    ASSERT_FALSE(info_.is_discarded()) << out;
    auto table = storage::LoadTableFromMetadata(info_["metadata"].get<std::string>());
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
  storage::Table table_;
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

}  // namespace
}  // namespace thaw::iceberg

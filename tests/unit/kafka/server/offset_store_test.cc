#include "thaw/kafka/server/offset_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <random>

namespace thaw::kafka::server {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("thaw-offset-store-" + std::to_string(std::random_device{}()));
    fs::remove_all(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string JournalMode(const fs::path& file) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, nullptr), SQLITE_OK);
  std::string mode;
  if (sqlite3_step(st) == SQLITE_ROW) mode = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(db);
  return mode;
}

TEST(OffsetStore, CreatesTheDirectoryAndAWalDatabase) {
  TempDir dir;
  const fs::path state = dir.path() / "nested" / "state";
  auto store = OffsetStore::Open(state.string());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->path(), (state / "groups.sqlite").string());
  EXPECT_TRUE(fs::exists(state / "groups.sqlite"));
  EXPECT_EQ(JournalMode(state / "groups.sqlite"), "wal");
}

TEST(OffsetStore, CommitsAreReadBackAfterReopening) {
  TempDir dir;
  {
    auto store = OffsetStore::Open(dir.path().string());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE((*store)->Commit("g1", {{"orders", 0, {42, 7, "meta", 1000}}, {"orders", 3, {9, -1, "", 1001}}}).ok());
    ASSERT_TRUE((*store)->Commit("g2", {{"users", 1, {5, -1, "x", 1002}}}).ok());
    // A later commit of the same partition replaces the earlier one.
    ASSERT_TRUE((*store)->Commit("g1", {{"orders", 0, {50, 8, "meta2", 2000}}}).ok());
    ASSERT_TRUE((*store)->Close().ok());
    ASSERT_TRUE((*store)->Close().ok());  // idempotent
    EXPECT_FALSE((*store)->Commit("g1", {{"orders", 0, {1, -1, "", 0}}}).ok());
  }
  auto store = OffsetStore::Open(dir.path().string());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto all = (*store)->LoadAll();
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 2u);
  const GroupOffsets& g1 = all->at("g1");
  ASSERT_EQ(g1.size(), 2u);
  const CommittedOffset& p0 = g1.at({"orders", 0});
  EXPECT_EQ(p0.offset, 50);
  EXPECT_EQ(p0.leader_epoch, 8);
  EXPECT_EQ(p0.metadata, "meta2");
  EXPECT_EQ(p0.commit_timestamp_ms, 2000);
  EXPECT_EQ(g1.at({"orders", 3}).offset, 9);
  EXPECT_EQ(all->at("g2").at({"users", 1}).metadata, "x");

  ASSERT_TRUE((*store)->DeleteGroup("g1").ok());
  all = (*store)->LoadAll();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 1u);
  EXPECT_EQ(all->count("g1"), 0u);
}

TEST(OffsetStore, InMemoryStoreWorksAndKeepsNothing) {
  auto store = OffsetStore::OpenInMemory();
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->Commit("g", {{"t", 0, {1, -1, "", 0}}}).ok());
  auto all = (*store)->LoadAll();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->at("g").at({"t", 0}).offset, 1);
  auto other = OffsetStore::OpenInMemory();
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE((*other)->LoadAll()->empty());
}

TEST(OffsetStore, UnusableStateDirectoryIsAnErrorNamingIt) {
  TempDir dir;
  fs::create_directories(dir.path());
  const fs::path file = dir.path() / "a-file";
  { std::ofstream(file) << "x"; }
  auto store = OffsetStore::Open((file / "state").string());
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find((file / "state").string()), std::string::npos) << store.status().ToString();
  EXPECT_NE(store.status().message().find("--state"), std::string::npos) << store.status().ToString();
}

}  // namespace
}  // namespace thaw::kafka::server

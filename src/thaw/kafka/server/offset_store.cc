#include "thaw/kafka/server/offset_store.h"

#include <sqlite3.h>

#include <filesystem>
#include <system_error>

namespace thaw::kafka::server {

namespace {

constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS group_offsets ("
    " group_id TEXT NOT NULL,"
    " topic TEXT NOT NULL,"
    " partition INTEGER NOT NULL,"
    " committed_offset INTEGER NOT NULL,"
    " leader_epoch INTEGER NOT NULL,"
    " metadata TEXT NOT NULL,"
    " commit_timestamp_ms INTEGER NOT NULL,"
    " PRIMARY KEY (group_id, topic, partition)) WITHOUT ROWID";

// Finalizes a prepared statement on every path.
struct Stmt {
  sqlite3_stmt* st = nullptr;
  ~Stmt() { sqlite3_finalize(st); }
};

void BindText(sqlite3_stmt* st, int index, const std::string& s) {
  sqlite3_bind_text(st, index, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
}

std::string ColumnText(sqlite3_stmt* st, int column) {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st, column));
  return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(st, column))) : std::string();
}

}  // namespace

Status OffsetStore::Error(const char* what) const {
  return Status::IOError("group offset store {}: {} failed: {}{}", path_, what,
                         db_ ? sqlite3_errmsg(db_) : "the store is closed",
                         db_ ? " (check that the --state directory is writable and the disk not full)" : "");
}

Status OffsetStore::Exec(const char* sql, const char* what) {
  if (!db_) return Error(what);
  if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) return Error(what);
  return Status::OK();
}

Result<std::unique_ptr<OffsetStore>> OffsetStore::Open(const std::string& dir) {
  if (dir.empty()) return Status::Invalid("group offset store: no state directory given");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return Status::IOError(
        "group offset store: cannot create the state directory '{}': {} (pass a writable --state DIR)", dir,
        ec.message());
  }
  const std::string path = (std::filesystem::path(dir) / "groups.sqlite").string();
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK) {
    std::string err = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return Status::IOError("group offset store: cannot open '{}': {} (pass a writable --state DIR)", path, err);
  }
  std::unique_ptr<OffsetStore> store(new OffsetStore(db, path));
  sqlite3_busy_timeout(db, 5000);
  // WAL with synchronous=FULL: a committed transaction is on disk when
  // sqlite3_step returns, so an answered OffsetCommit survives a crash.
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, "PRAGMA journal_mode=WAL", -1, &st, nullptr) != SQLITE_OK) {
    return store->Error("setting WAL mode");
  }
  std::string mode;
  if (sqlite3_step(st) == SQLITE_ROW) mode = ColumnText(st, 0);
  sqlite3_finalize(st);
  if (mode != "wal") {
    return Status::IOError(
        "group offset store {}: the database refuses WAL mode (got '{}'); is the --state "
        "directory on a filesystem without shared-memory support?",
        path, mode);
  }
  RETURN_NOT_OK(store->Exec("PRAGMA synchronous=FULL", "setting synchronous=FULL"));
  RETURN_NOT_OK(store->Exec(kSchema, "creating the group_offsets table"));
  return store;
}

Result<std::unique_ptr<OffsetStore>> OffsetStore::OpenInMemory() {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK) {
    sqlite3_close(db);
    return Status::IOError("group offset store: cannot open an in-memory SQLite database");
  }
  std::unique_ptr<OffsetStore> store(new OffsetStore(db, ":memory:"));
  RETURN_NOT_OK(store->Exec(kSchema, "creating the group_offsets table"));
  return store;
}

OffsetStore::~OffsetStore() { (void)Close(); }

Status OffsetStore::Close() {
  if (!db_) return Status::OK();
  // sqlite3_close checkpoints the WAL into the main file when it is the last connection.
  int rc = sqlite3_close(db_);
  if (rc != SQLITE_OK) {
    Status st = Error("closing");
    sqlite3_close_v2(db_);
    db_ = nullptr;
    return st;
  }
  db_ = nullptr;
  return Status::OK();
}

Result<std::map<std::string, GroupOffsets>> OffsetStore::LoadAll() {
  if (!db_) return Error("loading offsets");
  Stmt s;
  const char* sql =
      "SELECT group_id, topic, partition, committed_offset, leader_epoch, metadata, commit_timestamp_ms "
      "FROM group_offsets";
  if (sqlite3_prepare_v2(db_, sql, -1, &s.st, nullptr) != SQLITE_OK) return Error("loading offsets");
  std::map<std::string, GroupOffsets> out;
  int rc;
  while ((rc = sqlite3_step(s.st)) == SQLITE_ROW) {
    CommittedOffset c;
    c.offset = sqlite3_column_int64(s.st, 3);
    c.leader_epoch = sqlite3_column_int(s.st, 4);
    c.metadata = ColumnText(s.st, 5);
    c.commit_timestamp_ms = sqlite3_column_int64(s.st, 6);
    out[ColumnText(s.st, 0)][{ColumnText(s.st, 1), sqlite3_column_int(s.st, 2)}] = std::move(c);
  }
  if (rc != SQLITE_DONE) return Error("loading offsets");
  return out;
}

Status OffsetStore::Commit(const std::string& group_id, const std::vector<OffsetWrite>& writes) {
  if (writes.empty()) return Status::OK();
  RETURN_NOT_OK(Exec("BEGIN IMMEDIATE", "beginning an offset commit"));
  Status st = [&]() -> Status {
    Stmt s;
    const char* sql =
        "INSERT OR REPLACE INTO group_offsets (group_id, topic, partition, committed_offset, leader_epoch, metadata, "
        "commit_timestamp_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
    if (sqlite3_prepare_v2(db_, sql, -1, &s.st, nullptr) != SQLITE_OK) return Error("preparing an offset commit");
    for (const auto& w : writes) {
      sqlite3_reset(s.st);
      BindText(s.st, 1, group_id);
      BindText(s.st, 2, w.topic);
      sqlite3_bind_int(s.st, 3, w.partition);
      sqlite3_bind_int64(s.st, 4, w.committed.offset);
      sqlite3_bind_int(s.st, 5, w.committed.leader_epoch);
      BindText(s.st, 6, w.committed.metadata);
      sqlite3_bind_int64(s.st, 7, w.committed.commit_timestamp_ms);
      if (sqlite3_step(s.st) != SQLITE_DONE) return Error("writing a committed offset");
    }
    return Status::OK();
  }();
  if (!st.ok()) {
    (void)Exec("ROLLBACK", "rolling back");
    return st.WithContext(fmt::format("committing {} offsets of group '{}'", writes.size(), group_id));
  }
  return Exec("COMMIT", "committing offsets");
}

Status OffsetStore::DeleteGroup(const std::string& group_id) {
  if (!db_) return Error("deleting a group");
  Stmt s;
  if (sqlite3_prepare_v2(db_, "DELETE FROM group_offsets WHERE group_id = ?1", -1, &s.st, nullptr) != SQLITE_OK) {
    return Error("deleting a group");
  }
  BindText(s.st, 1, group_id);
  if (sqlite3_step(s.st) != SQLITE_DONE) return Error("deleting a group's offsets");
  return Status::OK();
}

}  // namespace thaw::kafka::server

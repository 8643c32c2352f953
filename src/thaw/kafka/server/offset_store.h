// Committed consumer-group offsets of `thaw serve`, persisted in SQLite
// (DIR/groups.sqlite, WAL mode, synchronous=FULL so that a commit is durable
// when Commit() returns). Only offsets are stored: group membership is not.
//
// Not thread-safe: the GroupCoordinator uses it from its strand only.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "thaw/common/status.h"

struct sqlite3;

namespace thaw::kafka::server {

struct CommittedOffset {
  int64_t offset = -1;
  int32_t leader_epoch = -1;
  std::string metadata;
  int64_t commit_timestamp_ms = 0;
};

// (topic, partition) -> committed offset, ordered by topic then partition.
using GroupOffsets = std::map<std::pair<std::string, int32_t>, CommittedOffset>;

struct OffsetWrite {
  std::string topic;
  int32_t partition = 0;
  CommittedOffset committed;
};

class OffsetStore {
 public:
  // Opens (creating the directory and the file if missing) DIR/groups.sqlite.
  static Result<std::unique_ptr<OffsetStore>> Open(const std::string& dir);
  // A store that keeps nothing across restarts (tests, `thaw serve` without --state).
  static Result<std::unique_ptr<OffsetStore>> OpenInMemory();
  ~OffsetStore();
  OffsetStore(const OffsetStore&) = delete;
  OffsetStore& operator=(const OffsetStore&) = delete;

  // Every committed offset, by group.
  Result<std::map<std::string, GroupOffsets>> LoadAll();
  // Writes the offsets of one group in one transaction; durable on return.
  Status Commit(const std::string& group_id, const std::vector<OffsetWrite>& writes);
  // Removes every offset of the group (DeleteGroups).
  Status DeleteGroup(const std::string& group_id);
  // Closes the database (checkpointing the WAL). Later calls fail. Idempotent.
  Status Close();

  const std::string& path() const { return path_; }  // ":memory:" for the in-memory store

 private:
  OffsetStore(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  Status Exec(const char* sql, const char* what);
  Status Error(const char* what) const;

  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace thaw::kafka::server

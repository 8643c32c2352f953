// `thaw maintain`: keeping an archived table healthy.
//  - compact: per Kafka partition (and topic, in a table holding several),
//    rewrite runs of small data files (below target size) into files of
//    about the target size, rows in offset order with fresh statistics; one
//    `replace` snapshot whose summary carries the archive offsets forward.
//    Deletes attached to the inputs (position, equality, deletion vectors)
//    are applied by the record reader while rewriting, and delete files left
//    applying to nothing are removed in the same commit. The new files keep
//    their inputs' largest data sequence number, and in format v3 every
//    row's _row_id / _last_updated_sequence_number (written as columns).
//    Runs never span a file that overlaps another's offsets.
//  - expire snapshots: drop snapshots older than a cutoff (never the current
//    one nor a ref's head), then delete the manifest lists, manifests and data
//    files only they referenced.
//  - remove orphans: delete files under the table location that no metadata,
//    snapshot, manifest list or manifest of the table references and that are
//    older than a safety window (default 3 days, as Iceberg's
//    DeleteOrphanFiles), so an in-flight commit's files are never taken.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "thaw/catalog/catalog.h"
#include "thaw/common/status.h"

namespace thaw::archive {

struct MaintainOptions {
  catalog::TableIdentifier table;
  bool compact = false;
  int64_t target_file_bytes = 128LL << 20;
  bool rewrite_manifests = false;               // merge small data manifests (after compaction)
  std::optional<int64_t> expire_older_than_ms;  // age; nullopt = no expiry
  int retain_last = 1;                          // snapshots always kept on main
  bool remove_orphans = false;
  int64_t orphan_older_than_ms = 3LL * 24 * 3600 * 1000;
  bool dry_run = false;
  const std::atomic<bool>* stop = nullptr;
};

struct MaintainSummary {
  int64_t files_rewritten = 0, files_written = 0;  // dry run: what would be
  int64_t compaction_groups = 0;
  int64_t records_rewritten = 0, bytes_written = 0;
  int64_t delete_files_removed = 0;  // delete files the rewrite left dangling, removed by its commit
  int64_t manifests_before = 0, manifests_after = 0;  // --rewrite-manifests (dry run: what would be)
  int64_t snapshots_expired = 0;
  std::vector<int64_t> expired_snapshot_ids;
  std::vector<std::string> expired_files;  // reachable only from expired snapshots (deleted unless dry run)
  int64_t files_deleted = 0, orphans_deleted = 0;
  std::vector<std::string> orphan_files;  // found (deleted unless dry run)
  int64_t commits = 0;
  int64_t snapshot_id = 0;  // after maintenance
  std::vector<std::string> notes;
};

Result<MaintainSummary> RunMaintain(catalog::Catalog& catalog, const MaintainOptions& options);

}  // namespace thaw::archive

// Scan planning: snapshot -> manifest list -> manifests -> FileScanTasks,
// each data file with the delete files that apply to it.
//
// Pruning works on a conjunction of integer ranges keyed by field id (the
// Kafka partition, offset and timestamp columns are integers):
//   1. manifests by their partition summaries (projected through the
//      manifest's own spec, never the current one),
//   2. data files by partition values, then by column lower/upper bounds.
// Parquet row groups are pruned later, by the file reader, with the same ranges.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/iceberg/manifest.h"
#include "thaw/iceberg/table_metadata.h"
#include "thaw/storage/file_io.h"

namespace thaw::iceberg {

// Inclusive integer range in the column's own unit (µs for timestamps,
// days for dates); an unset end is open.
struct IntRange {
  std::optional<int64_t> lo, hi;
  bool Contains(int64_t v) const { return (!lo || v >= *lo) && (!hi || v <= *hi); }
  // True when [min, max] may hold a value in the range.
  bool Overlaps(int64_t min, int64_t max) const { return (!lo || max >= *lo) && (!hi || min <= *hi); }
  bool empty() const { return lo && hi && *lo > *hi; }
};

struct ScanFilter {
  std::map<int32_t, IntRange> ranges;  // field id -> range, all must hold
  void Intersect(int32_t field_id, IntRange r);
};

struct FileScanTask {
  std::shared_ptr<const DataFile> file;
  int64_t data_sequence_number = 0;
  int64_t file_sequence_number = 0;
  std::vector<std::shared_ptr<const DataFile>> deletes;  // position, equality, DV
};

struct ScanStats {
  int64_t manifests_total = 0, manifests_skipped = 0;
  int64_t data_files_total = 0, data_files_skipped = 0;
  int64_t delete_files = 0;
};

class DeleteFileIndex;

class TableScan {
 public:
  // `snapshot` may be null (empty table): planning then yields nothing.
  static Result<TableScan> Make(std::shared_ptr<storage::FileIO> io, const TableMetadata* md,
                                const Snapshot* snapshot, ScanFilter filter);
  // Column metrics the caller needs on the planned files besides the
  // filter's own (e.g. offset bounds to order files); others are dropped.
  void KeepMetricsFor(std::vector<int32_t> field_ids) { extra_metric_ids_ = std::move(field_ids); }
  // Incremental append scan (--follow), like Iceberg Java's
  // IncrementalAppendScan: the data files each of these snapshots added, read
  // from that snapshot's own manifest list (manifests it wrote, entries ADDED
  // by it), so later manifest merges (which turn the entries EXISTING) and
  // compactions (which remove them) do not hide them. Every id must be an
  // ancestor of the scan's snapshot. Delete files: those live in any
  // snapshot from the oldest of them to the scan's snapshot, matched by the
  // usual sequence-number rules (a row deleted at any point since its append
  // stays deleted, even if a compaction later dropped the delete file).
  void OnlyAddedIn(std::set<int64_t> snapshot_ids) { added_in_ = std::move(snapshot_ids); }
  Result<std::vector<FileScanTask>> PlanFiles();
  const ScanStats& stats() const { return stats_; }

  // Exposed for tests: does a file's partition / metrics admit the filter?
  bool PartitionMayMatch(const DataFile& f) const;
  bool MetricsMayMatch(const DataFile& f) const;
  bool ManifestMayMatch(const ManifestFile& m) const;

 private:
  Result<std::vector<FileScanTask>> PlanAppended();
  // Reads the delete manifests of `manifests` into `index`, each manifest and
  // each delete file once (`seen` holds their paths across calls).
  Status IndexDeletes(const std::vector<ManifestFile>& manifests, std::set<std::string>* seen,
                      DeleteFileIndex* index);
  // Plans the live data files of manifest `m`; with `added_by`, only the
  // entries that snapshot ADDED.
  Status PlanDataManifest(const ManifestFile& m, const DeleteFileIndex& deletes, const std::vector<int32_t>& metric_ids,
                          std::optional<int64_t> added_by, std::vector<FileScanTask>* tasks);
  std::vector<int32_t> MetricIds() const;

  std::shared_ptr<storage::FileIO> io_;
  const TableMetadata* md_ = nullptr;
  const Snapshot* snapshot_ = nullptr;
  ScanFilter filter_;
  std::vector<int32_t> extra_metric_ids_;
  std::optional<std::set<int64_t>> added_in_;
  ScanStats stats_;
};

// Attaches delete files to data files per the spec's rules (DVs and
// position deletes: delete seq >= data seq; equality deletes: delete seq >
// data seq, same partition or a global (unpartitioned) delete).
class DeleteFileIndex {
 public:
  void Add(const ManifestEntry& entry, const TableMetadata& md);
  std::vector<std::shared_ptr<const DataFile>> ForDataFile(const DataFile& f, int64_t data_seq,
                                                           const TableMetadata& md) const;
  size_t size() const { return deletes_.size(); }

 private:
  struct Entry {
    std::shared_ptr<const DataFile> file;
    int64_t seq;
    bool global;  // equality delete with an unpartitioned spec
  };
  std::vector<Entry> deletes_;
  std::multimap<std::string, size_t> dv_by_path_;
};

}  // namespace thaw::iceberg

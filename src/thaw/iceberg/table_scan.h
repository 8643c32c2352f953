// Scan planning: snapshot -> manifest list -> manifests -> FileScanTasks,
// each data file with the delete files that apply to it.
//
// Pruning works on a conjunction of integer ranges keyed by field id (the
// Kafka partition, offset and timestamp columns are integers):
//   1. manifests by their partition summaries (projected through the
//      manifest's own spec, never the current one),
//   2. data files by partition values, then by column lower/upper bounds
//      (integer ranges, and prefixes of string/binary columns).
// Parquet row groups are pruned later, by the file reader, with the same ranges.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
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
  // field id -> a prefix every wanted value of that string/binary column
  // starts with (the Kafka key's, from --where): files are pruned by the
  // column's lower/upper bounds (which may be truncated, never wrongly).
  std::map<int32_t, std::string> prefixes;
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
  // Delete files looked at while matching them to data files (the index
  // keeps this near the number attached, not data files x delete files).
  int64_t delete_candidates = 0;
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

// Attaches delete files to data files per the spec's rules (Scan Planning):
//   - a deletion vector: referenced_data_file is the data file's path and
//     delete seq >= data seq; the newest one applies, and it replaces
//     position delete files;
//   - a position delete file: same partition (spec id and values), delete
//     seq >= data seq, and referenced_data_file, when set, is the data file;
//   - an equality delete file: delete seq > data seq, and the same partition
//     or an unpartitioned delete spec (a global delete).
// Delete files are indexed so that matching a data file looks only at the
// candidates that can apply: DVs and position deletes naming one data file
// (referenced_data_file, or equal file_path lower/upper bounds) by that
// path, other position and equality deletes by (spec id, partition tuple),
// global equality deletes in one list.
class DeleteFileIndex {
 public:
  void Add(const ManifestEntry& entry, const TableMetadata& md);
  // `candidates`, when given, is increased by the delete files examined.
  std::vector<std::shared_ptr<const DataFile>> ForDataFile(const DataFile& f, int64_t data_seq,
                                                           const TableMetadata& md,
                                                           int64_t* candidates = nullptr) const;
  size_t size() const { return deletes_.size(); }

  // Identity of a partition: spec id and tuple, as bytes (NaN and -0.0
  // normalised, so keys are equal exactly when Datum == says so).
  static std::string PartitionKey(int32_t spec_id, const std::vector<Datum>& partition);

 private:
  struct Entry {
    std::shared_ptr<const DataFile> file;
    int64_t seq;
  };
  std::vector<Entry> deletes_;
  std::unordered_map<std::string, std::vector<size_t>> dv_by_path_;
  std::unordered_map<std::string, std::vector<size_t>> pos_by_path_;       // names one data file
  std::unordered_map<std::string, std::vector<size_t>> pos_by_partition_;  // by PartitionKey
  std::unordered_map<std::string, std::vector<size_t>> eq_by_partition_;   // by PartitionKey
  std::vector<size_t> global_eq_;
};

}  // namespace thaw::iceberg

// A read plan: what one snapshot of a table holds, as Kafka partitions --
// the snapshot, the layout, the data files (with their delete files) and,
// per partition, an index from offsets and timestamps to files and row
// groups. Immutable once made and safe to share between threads: inspect,
// replay and a Fetch or ListOffsets handler ask it where a position lies,
// and RecordReaders iterate over it forward from any (partition, offset).
//
//   auto plan = ReadPlan::Make(table, options);           // manifests only
//   plan->Locate(3, 1000)                                 // row group holding offset >= 1000
//   plan->FirstAtOrAfterTime(3, ts)                       // first row group with a timestamp >= ts
//   plan->Watermarks(3)                                   // low / high offsets
//   RecordReader::Make(plan, {.start_offsets = {{3, 1000}}})
//
// The per-partition index reads the Parquet footers of the partition's
// files on first use (row-group statistics) and is kept. Statistics bound
// what a row group holds: deleted rows are not subtracted, so the exact
// first offset at or after a position is found by reading from the row
// group the index names.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/iceberg/schema.h"
#include "thaw/iceberg/table.h"
#include "thaw/iceberg/table_scan.h"
#include "thaw/records/layout.h"

namespace thaw::records {

struct ReadOptions;

// A planned data file: the scan task (with its delete files) and the bounds
// its metrics give.
struct PlannedFile {
  iceberg::FileScanTask task;
  int64_t off_lo = INT64_MIN, off_hi = INT64_MAX;    // offset column bounds
  int32_t part_lo = INT32_MIN, part_hi = INT32_MAX;  // Kafka partitions it may hold
  // With a source topic selected: the file may also hold rows of other
  // topics (its topic is not pinned by a partition value or equal bounds),
  // so readers filter its rows and its statistics bound more than the topic.
  bool other_topics = false;
  // Duplicate priority (higher wins): by data sequence number, file sequence
  // number, path.
  int64_t rank = 0;
};

// One row group of one planned file, as the index sees it (statistics; the
// full range when a writer wrote none).
struct RowGroupRef {
  size_t file = 0;  // into ReadPlan::files()
  int row_group = 0;
  int64_t first_offset = INT64_MIN, last_offset = INT64_MAX;
  int64_t min_timestamp_ms = INT64_MIN, max_timestamp_ms = INT64_MAX;
  int64_t rows = 0;
};

// `ms` in a timestamp column's units (units per ms: 1, 1000 or 10^6),
// saturated at the int64 limits: a far-future bound on a nanosecond column
// means "no bound", never a wrapped-around value.
int64_t MsToTimestampUnits(int64_t ms, int64_t units_per_ms);

class ReadPlan {
 public:
  // Plans the read `options` describe: snapshot, layout, partitions, offset
  // and time ranges and only_added_in prune manifests and files here; the
  // rest of ReadOptions (start offsets, order, projection) is for readers.
  static Result<std::shared_ptr<const ReadPlan>> Make(std::shared_ptr<const iceberg::Table> table,
                                                      const ReadOptions& options);

  const std::shared_ptr<const iceberg::Table>& table() const { return table_; }
  const Layout& layout() const { return layout_; }
  const iceberg::Snapshot* snapshot() const { return snapshot_; }
  const iceberg::ScanStats& scan_stats() const { return stats_; }
  const std::vector<PlannedFile>& files() const { return files_; }
  // The table's schema.name-mapping.default (null when unset): how data
  // files without field ids map column names to ids.
  const std::shared_ptr<const iceberg::NameMapping>& name_mapping() const { return name_mapping_; }
  // Partitions the plan may hold, ascending.
  const std::vector<int32_t>& partitions() const { return partitions_; }
  // The source topic selected (ReadOptions::source_topic): the plan holds
  // only files that may have its records, and readers of the plan keep
  // only its rows.
  const std::optional<std::string>& source_topic() const { return source_topic_; }
  // Without a selection, the source topics the planned files hold, sorted
  // (from the topic partition value, equal bounds of the topic column, else
  // the column read once); empty when the layout has no topic column or a
  // topic is selected.
  const std::vector<std::string>& topics() const { return topics_; }
  // OK unless the plan holds more than one topic and none is selected:
  // then kInvalidArgument "table X holds topics a, b: choose one with
  // <how>" (records of different topics share partition and offset numbers,
  // so they cannot be read as one topic).
  Status RequireOneTopic(std::string_view how = "--source-topic") const;
  // Sum of the files' record counts (an upper bound: ranges, deletes and
  // other partitions are not subtracted), their total size, and their
  // timestamp bounds in ms when every file has them.
  int64_t planned_records() const;
  int64_t planned_file_bytes() const;
  std::optional<std::pair<int64_t, int64_t>> planned_timestamp_range_ms() const;
  // Units of the timestamp column per millisecond (1 for long columns).
  int64_t timestamp_units_per_ms() const;
  int64_t ms_to_timestamp_units(int64_t ms) const { return MsToTimestampUnits(ms, timestamp_units_per_ms()); }

  // The partition's row groups, by first offset (then file, row group).
  Result<std::shared_ptr<const std::vector<RowGroupRef>>> RowGroups(int32_t partition) const;
  // The first row group (by offset) that may hold `offset` or a later one
  // of the partition; nullopt past the end.
  Result<std::optional<RowGroupRef>> Locate(int32_t partition, int64_t offset) const;
  // The first row group (by offset) that may hold a record of the
  // partition with timestamp >= ts_ms (Kafka's ListOffsets by time);
  // nullopt if none.
  Result<std::optional<RowGroupRef>> FirstAtOrAfterTime(int32_t partition, int64_t ts_ms) const;
  // The partition's offset bounds from statistics: low = the first offset,
  // high = the last + 1 (Kafka's log start and end offsets, deletes at the
  // ends aside); nullopt for a partition the plan does not hold.
  struct OffsetBounds {
    int64_t low = 0, high = 0;
  };
  Result<std::optional<OffsetBounds>> Watermarks(int32_t partition) const;
  // The partition's end (its last offset + 1) when the statistics give it
  // exactly: every file that may hold the partition holds only it, and every
  // row group has offset bounds. nullopt otherwise (files of several
  // partitions, missing statistics: a read of the offsets tells), and for a
  // partition without row groups.
  Result<std::optional<int64_t>> ExactEnd(int32_t partition) const;

 private:
  ReadPlan() = default;
  Status Plan(const ReadOptions& options);

  std::shared_ptr<const iceberg::Table> table_;
  Layout layout_;
  const iceberg::Snapshot* snapshot_ = nullptr;
  iceberg::ScanStats stats_;
  std::vector<PlannedFile> files_;
  std::vector<int32_t> partitions_;
  std::optional<std::string> source_topic_;
  std::vector<std::string> topics_;
  std::shared_ptr<const iceberg::NameMapping> name_mapping_;
  // The per-partition index, built on first use.
  mutable std::mutex mu_;
  mutable std::map<int32_t, std::shared_ptr<const std::vector<RowGroupRef>>> index_;
};

// Plans shared between readers of the same snapshot (serve's Fetch and
// ListOffsets handlers, --follow): keyed by table metadata location,
// snapshot, layout, partitions, ranges and source topic -- not by start offsets, which
// readers apply -- and the oldest beyond `capacity` are dropped.
class ReadPlanCache {
 public:
  explicit ReadPlanCache(size_t capacity = 16) : capacity_(capacity) {}
  Result<std::shared_ptr<const ReadPlan>> Get(std::shared_ptr<const iceberg::Table> table, const ReadOptions& options);
  size_t size() const;

 private:
  size_t capacity_;
  mutable std::mutex mu_;
  std::vector<std::pair<std::string, std::shared_ptr<const ReadPlan>>> entries_;  // oldest first
};

}  // namespace thaw::records

// The record reader: the one path by which Thaw turns an Iceberg table into
// Kafka records, shared by inspect, replay and serve.
//
//   RecordReader::Make  a ReadPlan (read_plan.h: snapshot, layout, files;
//                       made here or shared), narrowed by the options
//   Next()              per partition group (ascending): row groups ordered by
//                       offset; those whose ranges overlap form a cluster,
//                       decoded (rows filtered by range and deletes, turned
//                       into Record views, sorted by partition and offset) on
//                       worker threads ahead of the consumer, and emitted in
//                       order. A partition group is one partition when the
//                       table is partitioned by the Kafka partition; when
//                       files hold several partitions (unpartitioned tables)
//                       it is all the partitions those files hold, and each
//                       row group is decoded once for all of them
//                       (ReadOrder::kPerPartition, the default).
//                       A cluster too big for the memory budget (files that
//                       overlap in offset range) is merged instead: files
//                       sorted by offset stream into a k-way merge a batch at
//                       a time; the others are sorted externally (sorted runs
//                       spilled to ReadOptions::spill_dir, then merged).
//
// Memory is bounded by (read_ahead + 1) clusters -- normally row groups --
// and ReadOptions::memory_budget, not by the table size.
//
// Duplicate offsets (the same partition and offset twice): one row is kept,
// the one from the file with the highest data sequence number, then the
// highest file sequence number, then the greatest path; within one file the
// first row. duplicate_stats() counts the rows dropped.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/iceberg/deletion_vector.h"
#include "thaw/iceberg/table.h"
#include "thaw/iceberg/table_scan.h"
#include "thaw/records/decode_gate.h"
#include "thaw/records/layout.h"
#include "thaw/records/read_plan.h"
#include "thaw/records/record.h"
#include "thaw/records/record_merge.h"

namespace thaw::records {

// The order of Next()'s records. Either way each partition's records come in
// offset order.
enum class ReadOrder {
  // Partitions that share row groups (files holding several Kafka
  // partitions) come interleaved a cluster (normally a row group) at a time,
  // each cluster's records by (partition, offset), and every row group is
  // decoded once. Tables partitioned by the Kafka partition read partition
  // by partition, as with kPartitionMajor.
  kPerPartition,
  // All of partition p before any of p + 1. Row groups holding several
  // partitions are then decoded once per partition they hold.
  kPartitionMajor,
};

struct ReadOptions {
  iceberg::SnapshotSelector snapshot;
  std::optional<std::set<int32_t>> partitions;  // none = all
  std::vector<int32_t> extra_columns;           // top-level field ids to project besides the layout's
  std::optional<int64_t> from_offset;           // inclusive
  std::optional<int64_t> to_offset;             // exclusive
  // Per-partition first offset (resuming a job): records of partition p
  // below start_offsets[p] are skipped, and planning prunes with it.
  std::map<int32_t, int64_t> start_offsets;
  // Incremental read: only data files added by these snapshots (--follow).
  std::optional<std::set<int64_t>> only_added_in;
  // Only these data files (paths as the manifests name them), with the
  // delete files that apply to them (compaction reads exactly its group).
  std::optional<std::set<std::string>> only_files;
  std::optional<int64_t> from_time_ms;  // record timestamp >= (inclusive)
  std::optional<int64_t> to_time_ms;    // record timestamp < (exclusive)
  // Every record wanted has a key starting with this (from --where): data
  // files whose key column bounds rule it out are not planned. Not a
  // filter: records are still checked by the caller.
  std::optional<std::string> key_prefix;
  LayoutOptions layout;
  // Only records of this source topic, for tables that hold several (a
  // topic column: Thaw's kafka_topic, Kafka Connect's _kafka_metadata_topic).
  // Planning drops files whose topic partition value, or equal lower and
  // upper bounds of the topic column, name another topic; readers drop the
  // other topics' rows before ordering and de-duplicating. Rows with a null
  // topic belong to the table property thaw.source.topic. Reading a table
  // that holds several topics without it is an error (ReadPlan::topics()).
  // Part of the plan: a reader of a shared plan uses the plan's.
  std::optional<std::string> source_topic;
  ReadOrder order = ReadOrder::kPerPartition;
  // Project only the partition, offset, timestamp and timestamp type
  // columns (and extra_columns, and equality-delete columns): records then
  // carry no key, value or headers. For summaries (inspect) that must not
  // pay for decoding values.
  bool metadata_only = false;
  // Always: a row group the offset range [from_offset, to_offset) cuts,
  // whose offsets ascend in row order, is decoded only over the rows that
  // can hold offsets in range: its offset column is read first, then the
  // data pages of the other columns that hold those rows
  // (pq::ParquetFile::ReadRows). Local files only (on an object store each
  // column chunk would be a request of its own rather than one coalesced
  // read), row groups of at least kNarrowMinRows rows, and ranges that cut
  // off at least an eighth of the row group's offsets by its statistics
  // (DecodeStats::narrowed counts them).
  //
  // For a seek that must not decode whole row groups (serve's first Fetch
  // of a segment): a row group in range that cannot be narrowed as above
  // (offsets not ascending, no offset column, an object store) makes Next
  // fail with kUnsupported, before anything of it is decoded.
  bool require_narrow = false;
  static constexpr int64_t kNarrowMinRows = 4096;
  int64_t batch_size = 4096;
  // Clusters (groups of row groups) decoded ahead of the consumer, each on
  // its own thread. Memory is about read_ahead + 1 clusters.
  size_t read_ahead = 2;
  // Read-ahead of I/O beyond the clusters decoding: the column chunks of up
  // to read_ahead more clusters (and at most prefetch_bytes of them, or one
  // cluster if it is bigger) are fetched while the workers decode, and the
  // footers of up to files_ahead data files after the ones being read are
  // opened in the background -- across files and partitions, so an object
  // store's latency per request hides behind decoding. kAuto: only for files
  // on an object store (local reads are as before).
  enum class Prefetch { kAuto, kOn, kOff };
  Prefetch prefetch = Prefetch::kAuto;
  int64_t prefetch_bytes = int64_t{64} << 20;
  size_t files_ahead = 2;
  // Where overlapping files that are not sorted by offset are sorted
  // externally: a private subdirectory is made there (empty = $TMPDIR or
  // /tmp) and removed when the reader is destroyed.
  std::string spill_dir;
  // Memory for decoding a cluster of overlapping row groups at once; bigger
  // clusters are merged as streams / sorted externally within this budget.
  int64_t memory_budget = int64_t{512} << 20;
  // What files merged as streams may hold for their dictionary pages beyond
  // memory_budget / 2 before the largest are spilled instead (a streamed
  // reader holds a column's whole dictionary, decoded twice over, for as
  // long as it is open). A reader that lives long and beside many others
  // (serve's cursors) sets 0: its budget is all it gets.
  int64_t dictionary_allowance = int64_t{64} << 20;
  // Shared with other readers decoding at the same time (decode_gate.h):
  // each row group's decoding takes its cost from it first. None: this
  // reader's own budget is the only bound.
  std::shared_ptr<DecodeGate> decode_gate;
  // With a gate: each time half of it has been given back, have Arrow's
  // allocator return what it keeps of what decoding freed (DecodeGate). For
  // readers that run when memory is short (serve's cursors: the cache has
  // no room for their segments); a reader decoding at full speed would pay
  // for the pages again (a cold read of bench.records 7-23 % slower).
  bool return_freed = false;
};

class RecordReader {
 public:
  // Plans the read (ReadPlan::Make) and reads it.
  static Result<std::unique_ptr<RecordReader>> Make(std::shared_ptr<const iceberg::Table> table, ReadOptions options);
  // Reads a plan made earlier (shared, e.g. from a ReadPlanCache): the plan's
  // files, narrowed by `options` (partitions, ranges, start offsets; the
  // options' snapshot and layout are the plan's). Files wholly before a
  // partition's start offset are not opened, so a reader can start anywhere.
  static Result<std::unique_ptr<RecordReader>> Make(std::shared_ptr<const ReadPlan> plan, ReadOptions options);
  ~RecordReader();

  const std::shared_ptr<const ReadPlan>& plan() const;
  const Layout& layout() const;
  const iceberg::Snapshot* snapshot() const;
  const iceberg::ScanStats& scan_stats() const;
  int64_t planned_files() const;
  // Sum of the planned data files' record counts (an upper bound of what a
  // read yields: ranges, deletes and other partitions are not subtracted).
  int64_t planned_records() const;
  // The planned data files' timestamp bounds in ms (column metrics), when
  // every planned file has them; and the files' total size in bytes.
  std::optional<std::pair<int64_t, int64_t>> planned_timestamp_range_ms() const;
  int64_t planned_file_bytes() const;
  // Partitions the plan may contain, ascending.
  std::vector<int32_t> partitions() const;
  // Duplicate offsets dropped so far (see the rule above), and how many of
  // them differed from the row kept.
  DuplicateStats duplicate_stats() const;
  // Clusters merged as streams instead of decoded at once, and the bytes
  // spilled to sort files that are not in offset order (for tests, benches).
  struct MergeStats {
    int64_t merged_clusters = 0;
    int64_t spilled_runs = 0;
    int64_t spilled_bytes = 0;
  };
  MergeStats merge_stats() const;
  // Deletion vectors read so far: blobs and bytes fetched from Puffin files
  // (each blob by its byte range, once), and cache hits.
  iceberg::DeletionVectorCache::Stats deletion_vector_stats() const;
  // What was decoded so far: row groups read with the full projection (each
  // once per cluster that holds it), their rows, and the bytes of the decoded
  // Arrow batches (for tests and benches: a row group holding 16 partitions
  // is decoded once, a metadata-only read decodes no values).
  struct DecodeStats {
    int64_t row_groups = 0;
    int64_t rows = 0;
    int64_t bytes = 0;
    int64_t narrowed = 0;  // row groups read over part of their rows (ReadOptions::require_narrow)
  };
  DecodeStats decode_stats() const;
  // Read-ahead so far (ReadOptions::prefetch): clusters whose column chunks
  // were fetched before a worker took them, their bytes (as stored), the
  // most clusters and bytes waiting fetched at once, and data files opened
  // in the background ahead of their turn.
  struct PrefetchStats {
    int64_t clusters = 0;
    int64_t bytes = 0;
    int64_t max_clusters_ahead = 0;
    int64_t max_bytes_ahead = 0;
    int64_t files_opened_ahead = 0;
  };
  PrefetchStats prefetch_stats() const;

  // Fills `out` with the next records in (partition, offset) order; returns
  // false when the read is complete.
  Result<bool> Next(RecordBatch* out);

  struct Impl;

 private:
  explicit RecordReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace thaw::records

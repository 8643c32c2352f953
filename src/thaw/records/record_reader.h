// The record reader: the one path by which Thaw turns an Iceberg table into
// Kafka records, shared by inspect, replay and serve.
//
//   RecordReader::Make  resolve snapshot + layout, plan files (TableScan)
//   Next()              per partition (ascending): row-group units ordered by
//                       offset, overlapping units merged and sorted, rows
//                       filtered (range, deletes) and decoded to Record views.
//
// Memory is bounded by the largest group of row groups whose offset ranges
// overlap (normally one row group), not by the table size.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/iceberg/table_scan.h"
#include "thaw/records/layout.h"
#include "thaw/records/record.h"
#include "thaw/storage/catalog.h"

namespace thaw::records {

struct ReadOptions {
  iceberg::SnapshotSelector snapshot;
  std::optional<std::set<int32_t>> partitions;  // none = all
  std::optional<int64_t> from_offset;            // inclusive
  std::optional<int64_t> to_offset;              // exclusive
  std::optional<int64_t> from_time_ms;           // record timestamp >= (inclusive)
  std::optional<int64_t> to_time_ms;             // record timestamp < (exclusive)
  LayoutOptions layout;
  int64_t batch_size = 4096;
};

class RecordReader {
 public:
  static Result<std::unique_ptr<RecordReader>> Make(std::shared_ptr<const storage::Table> table,
                                                    ReadOptions options);
  ~RecordReader();

  const Layout& layout() const;
  const iceberg::Snapshot* snapshot() const;
  const iceberg::ScanStats& scan_stats() const;
  int64_t planned_files() const;
  // Partitions the plan may contain, ascending.
  std::vector<int32_t> partitions() const;

  // Fills `out` with the next records in (partition, offset) order; returns
  // false when the read is complete.
  Result<bool> Next(RecordBatch* out);

  struct Impl;

 private:
  explicit RecordReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace thaw::records

// Manifest lists and manifests (Avro), decoded into plain structs with the
// spec's inheritance rules applied (sequence numbers, snapshot ids,
// first_row_id), so planning never sees a null that the spec says to inherit.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/iceberg/table_metadata.h"
#include "thaw/storage/file_io.h"

namespace thaw::iceberg {

// A partition value or a bound: enough of a literal for equality and ordering.
struct Datum {
  enum Kind { kNull, kInt, kDouble, kBytes } kind = kNull;
  int64_t i = 0;
  double d = 0;
  std::string s;
  bool operator==(const Datum& o) const;
  bool operator<(const Datum& o) const;
  std::string ToString() const;
};

struct FieldSummary {
  bool contains_null = true;
  std::optional<bool> contains_nan;
  std::optional<std::string> lower_bound;  // single-value serialisation
  std::optional<std::string> upper_bound;
};

enum class ManifestContent { kData = 0, kDeletes = 1 };

struct ManifestFile {
  std::string path;
  int64_t length = 0;
  int32_t spec_id = 0;
  ManifestContent content = ManifestContent::kData;
  int64_t sequence_number = 0;
  int64_t min_sequence_number = 0;
  int64_t added_snapshot_id = 0;
  std::optional<int32_t> added_files, existing_files, deleted_files;
  std::optional<int64_t> added_rows, existing_rows, deleted_rows;
  std::vector<FieldSummary> partitions;
  std::optional<int64_t> first_row_id;
  bool spec_from_list = true;  // false for v1 inline manifests (spec read from the file)

  // False when the counts prove the manifest has no live files.
  bool may_have_live_files() const;
};

enum class FileContent { kData = 0, kPositionDeletes = 1, kEqualityDeletes = 2 };

struct DataFile {
  FileContent content = FileContent::kData;
  std::string path;
  std::string format;  // parquet, avro, orc, puffin (lower case)
  int32_t spec_id = 0;
  std::vector<Datum> partition;  // one per spec field, in spec order
  int64_t record_count = 0;
  int64_t file_size = 0;
  std::map<int32_t, int64_t> column_sizes;
  std::map<int32_t, int64_t> value_counts;
  std::map<int32_t, int64_t> null_value_counts;
  std::map<int32_t, int64_t> nan_value_counts;
  std::map<int32_t, std::string> lower_bounds;
  std::map<int32_t, std::string> upper_bounds;
  std::vector<int64_t> split_offsets;
  std::vector<int32_t> equality_ids;
  std::optional<int32_t> sort_order_id;
  std::optional<int64_t> first_row_id;
  std::optional<std::string> referenced_data_file;
  std::optional<int64_t> content_offset;
  std::optional<int64_t> content_size;
  bool is_deletion_vector() const { return content == FileContent::kPositionDeletes && format == "puffin"; }
};

enum class EntryStatus { kExisting = 0, kAdded = 1, kDeleted = 2 };

struct ManifestEntry {
  EntryStatus status = EntryStatus::kAdded;
  int64_t snapshot_id = 0;
  int64_t sequence_number = 0;       // data sequence number (inherited)
  int64_t file_sequence_number = 0;  // inherited
  DataFile file;
};

// Reads a snapshot's manifests (manifest list, or v1 inline `manifests`).
Result<std::vector<ManifestFile>> ReadManifestList(storage::FileIO& io, const TableMetadata& md,
                                                   const Snapshot& snapshot);

// Reads one manifest's entries, inheritance applied. DELETED entries are kept
// (status says so); callers drop them. With `metric_ids` (sorted), column
// metrics are kept only for those field ids and the per-column maps the
// planner never uses are skipped undecoded -- most of a manifest's bytes.
Result<std::vector<ManifestEntry>> ReadManifest(storage::FileIO& io, const TableMetadata& md,
                                                const ManifestFile& manifest,
                                                const std::vector<int32_t>* metric_ids = nullptr);

// Single-value bound decoding (spec Appendix D) for the types Thaw prunes on.
// Promoted types keep their old encoding: a 4-byte long bound is an int.
std::optional<int64_t> DecodeIntegerBound(const std::string& bytes);
Datum DecodeBound(const std::string& bytes, const struct Type& type);

}  // namespace thaw::iceberg

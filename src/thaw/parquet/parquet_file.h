// A Parquet data file read through FileIO, with columns found by Iceberg
// field id (falling back to names for files written without ids) and
// row-group statistics exposed for pruning.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <arrow/record_batch.h>
#include <arrow/type_fwd.h>
#include <parquet/arrow/reader.h>

#include "thaw/common/status.h"
#include "thaw/storage/file_io.h"

namespace thaw::pq {

// Field id stored by Parquet writers in the Arrow field metadata; -1 if none.
int32_t FieldIdOf(const arrow::Field& f);

class ParquetFile {
 public:
  static Result<std::unique_ptr<ParquetFile>> Open(storage::FileIO& io, const std::string& location);

  // Another reader of the same file sharing the parsed footer, for reading
  // different row groups on another thread (a FileReader is not thread-safe).
  Result<std::unique_ptr<ParquetFile>> Clone(storage::FileIO& io) const;
  // The same, reading column chunks through a small buffer page by page
  // (no pre-buffering), so memory is one batch, not one row group: for the
  // reader's k-way merge, which holds many files open at once.
  Result<std::unique_ptr<ParquetFile>> CloneStreaming(storage::FileIO& io) const;

  const std::string& location() const { return location_; }
  int num_row_groups() const;
  int64_t row_group_num_rows(int rg) const;
  // Uncompressed bytes of a row group (all columns), from the footer.
  int64_t row_group_byte_size(int rg) const;
  int64_t row_group_first_row(int rg) const { return first_rows_[rg]; }
  int64_t num_rows() const;

  // Index into manifest().schema_fields of the top-level field with this
  // field id (or, when the file has no ids, this name); -1 if absent.
  int TopLevelField(int32_t field_id, const std::string& name) const;
  // Leaf column index of a primitive field reached by a path of field ids
  // (names as fallback) from the top level; -1 if absent.
  int LeafColumn(const std::vector<std::pair<int32_t, std::string>>& path) const;
  // Integer min/max statistics of a leaf column in a row group, if present.
  std::optional<std::pair<int64_t, int64_t>> IntStats(int rg, int leaf) const;

  // Streams the given row groups, projected to the given top-level fields
  // (indices from TopLevelField). Batch columns follow `top_level` order.
  Result<std::unique_ptr<arrow::RecordBatchReader>> Read(const std::vector<int>& row_groups,
                                                         const std::vector<int>& top_level, int64_t batch_size);

 private:
  std::string location_;
  static Result<std::unique_ptr<ParquetFile>> OpenWith(storage::FileIO& io, const std::string& location,
                                                       std::shared_ptr<parquet::FileMetaData> metadata,
                                                       bool streaming = false);
  std::unique_ptr<parquet::arrow::FileReader> reader_;
  std::vector<int64_t> first_rows_;
};

}  // namespace thaw::pq

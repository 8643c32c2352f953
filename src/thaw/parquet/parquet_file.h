// A Parquet data file read through FileIO, with columns found by Iceberg
// field id (falling back to names for files written without ids) and
// row-group statistics exposed for pruning.
#pragma once

#include <arrow/io/interfaces.h>
#include <arrow/record_batch.h>
#include <arrow/type_fwd.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/iceberg/schema.h"
#include "thaw/storage/file_io.h"

namespace thaw::pq {

// Field id stored by Parquet writers in the Arrow field metadata; -1 if none.
int32_t FieldIdOf(const arrow::Field& f);

class ParquetFile {
 public:
  static Result<std::unique_ptr<ParquetFile>> Open(storage::FileIO& io, const std::string& location);
  // A table's data file. Files written without field ids (added with
  // pyiceberg's add_files, say) have their columns given ids through the
  // table's name mapping (`schema.name-mapping.default`), as the spec says:
  // columns it does not map are absent, and batches read carry the mapped
  // ids in their field metadata. Without ids and without a mapping the file
  // cannot be read by id: an error names the file and the fix.
  // `file_size` is the manifest's file_size_in_bytes when known (-1 if not):
  // an object store then needs no HEAD request to find the footer.
  static Result<std::unique_ptr<ParquetFile>> OpenDataFile(storage::FileIO& io, const std::string& location,
                                                           std::shared_ptr<const iceberg::NameMapping> mapping,
                                                           int64_t file_size = -1);

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
  // What decoding these top-level fields of a row group into Arrow arrays
  // allocates, estimated from the footer: fixed-width values by their width;
  // byte arrays by their unencoded length (Parquet's size statistics, which
  // Arrow >= 19 and parquet-java >= 1.14 write), else the length of their
  // min/max statistics for dictionary-encoded chunks, else the uncompressed
  // page bytes; offsets and validity bitmaps; never below the uncompressed
  // size of the pages (which for dictionary- or RLE-encoded columns is far
  // below what decoding materialises). Empty `top_level` = all fields.
  int64_t row_group_decoded_bytes(int rg, const std::vector<int>& top_level) const;
  // What a reader of these fields of a row group holds for its dictionary
  // pages while it reads (each page decompressed, and its values decoded):
  // a cost per open reader, whatever its batch size. Estimated from the
  // stored size of the page and the column chunk's compression ratio.
  int64_t row_group_dictionary_bytes(int rg, const std::vector<int>& top_level) const;
  // Bytes a read of these top-level fields of a row group fetches (their
  // column chunks as stored, compressed), from the footer.
  int64_t row_group_fetch_bytes(int rg, const std::vector<int>& top_level) const;
  // True when the file is read from an object store (not a local FileIO).
  bool remote() const { return remote_; }
  int64_t row_group_first_row(int rg) const { return first_rows_[rg]; }
  int64_t num_rows() const;

  // True when the file has no field ids and the name mapping supplied them.
  bool name_mapped() const { return mapped_; }

  // Index into manifest().schema_fields of the top-level field with this
  // field id (or, when the file has no ids and no mapping, this name); -1 if absent.
  int TopLevelField(int32_t field_id, const std::string& name) const;
  // Leaf column index of a primitive field reached by a path of field ids
  // (names as fallback) from the top level; -1 if absent.
  int LeafColumn(const std::vector<std::pair<int32_t, std::string>>& path) const;
  // Integer min/max statistics of a leaf column in a row group, if present.
  std::optional<std::pair<int64_t, int64_t>> IntStats(int rg, int leaf) const;

  // Streams the given row groups, projected to the given top-level fields
  // (indices from TopLevelField). Batch columns follow `top_level` order.
  // On an object store the column chunks are pre-buffered (coalesced, a few
  // requests ahead of the decoder), unless Prefetch fetched them already.
  Result<std::unique_ptr<arrow::RecordBatchReader>> Read(const std::vector<int>& row_groups,
                                                         const std::vector<int>& top_level, int64_t batch_size);

  // Rows [from, to) of row group `rg` (numbered within it), projected to
  // the given top-level fields, as one batch. The data pages of a field that
  // is a single non-repeated column are skipped, undecompressed, where they
  // hold none of those rows (rows counted from each page header: no page
  // index needed); other fields are decoded whole and sliced. For a seek
  // into a large row group: about a page per column instead of all of them.
  // kUnsupported when the rows do not fit one batch (a binary column past
  // 2 GiB): read the row group with Read instead.
  Result<std::unique_ptr<arrow::RecordBatchReader>> ReadRows(int rg, const std::vector<int>& top_level, int64_t from,
                                                             int64_t to);

  // Starts fetching the column chunks a later Read of exactly these row
  // groups and fields needs, now, on Arrow's IO thread pool (coalesced as
  // Read would), and returns at once: the fetch overlaps whatever the caller
  // does until it reads (the record reader decodes other row groups). The
  // bytes are held until this reader is destroyed or reads other row groups.
  // Local files too (then the reads are preads on the IO pool). Not for
  // streaming readers.
  Status Prefetch(const std::vector<int>& row_groups, const std::vector<int>& top_level);
  // Waits until a Prefetch's fetches have ended (their outcome is Read's).
  void WaitForPrefetch();

 private:
  std::string location_;
  static Result<std::unique_ptr<ParquetFile>> OpenWith(storage::FileIO& io, const std::string& location,
                                                       std::shared_ptr<::parquet::FileMetaData> metadata,
                                                       bool streaming,
                                                       std::shared_ptr<const iceberg::NameMapping> mapping,
                                                       bool require_ids, int64_t file_size = -1);
  Status ApplyNameMapping(bool require_ids);
  int32_t IdOf(const ::parquet::arrow::SchemaField& f) const;
  const ::parquet::arrow::SchemaField* FindChild(const std::vector<::parquet::arrow::SchemaField>& fields, int32_t id,
                                                 const std::string& name, int* index) const;

  std::vector<int> LeavesOf(const std::vector<int>& top_level) const;

  std::unique_ptr<::parquet::arrow::FileReader> reader_;
  // The file and reader properties reader_ was opened with (ReadRows opens
  // a second reader over them, sharing the parsed footer).
  std::shared_ptr<arrow::io::RandomAccessFile> source_;
  std::shared_ptr<::parquet::ReaderProperties> reader_properties_;
  int64_t file_size_ = -1;
  bool remote_ = false;
  bool streaming_ = false;
  // What Prefetch asked for (row groups, leaf columns); Read of the same
  // then uses those buffers instead of fetching again.
  std::optional<std::pair<std::vector<int>, std::vector<int>>> prefetched_;
  std::vector<int64_t> first_rows_;
  // Name mapping state (files without field ids): ids of the schema's
  // fields, and the top-level Arrow fields with ids in their metadata.
  std::shared_ptr<const iceberg::NameMapping> mapping_;
  bool require_ids_ = false;
  bool mapped_ = false;
  std::unordered_map<const ::parquet::arrow::SchemaField*, int32_t> mapped_ids_;
  std::vector<std::shared_ptr<arrow::Field>> mapped_top_;
};

}  // namespace thaw::pq

// Writes Kafka records as Parquet data files in Thaw's canonical layout
// (docs/layouts.md): Iceberg field ids on every column (nested ones too),
// zstd, rows in the order appended (archive appends one Kafka partition's
// records in offset order), row groups cut by size so memory stays bounded,
// and the Iceberg metrics a manifest entry needs (value / null counts and
// column sizes for every column; lower / upper bounds for kafka_partition,
// kafka_offset, kafka_timestamp, kafka_timestamp_type, and kafka_topic when
// present) -- the bounds offset and time pruning rely on.
//
// The same writer writes the row layout (docs/layouts.md, "thaw-row"): the
// table's schema then names field 6 `value_raw` and adds field 12 `value`,
// a struct of the decoded value (archive/row_value.h), filled by
// AppendDecoded.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "thaw/common/status.h"
#include "thaw/iceberg/manifest.h"
#include "thaw/iceberg/schema.h"
#include "thaw/records/record.h"
#include "thaw/storage/file_io.h"

namespace arrow {
class Array;
}  // namespace arrow

namespace thaw::parquet {

// The decoded values of records [begin, end) for a row-layout file: row k of
// `values` (a struct array of the `value` column's Arrow type, arrow_type.h)
// belongs to record begin + k; `keep_raw[k]` says whether that record's value
// bytes also go to `value_raw` (field 6) -- otherwise value_raw is null.
// `schema_ids[k]`, when the table has the `value_schema_id` column (field
// id 13), is that record's schema registry id (empty or nullopt: null).
// `keys` and `key_schema_ids` the same for the decoded keys (field ids 14
// `key_decoded` and 15 `key_schema_id`), when the table has them (null:
// null keys); the key bytes always go to `key`.
struct DecodedValues {
  std::shared_ptr<arrow::Array> values;
  std::vector<bool> keep_raw;
  std::vector<std::optional<int32_t>> schema_ids;
  std::shared_ptr<arrow::Array> keys;
  std::vector<std::optional<int32_t>> key_schema_ids;
};

struct DataFileWriterOptions {
  int64_t row_group_bytes = 64LL << 20;  // uncompressed bytes buffered before a row group is written
  int zstd_level = 3;
  std::optional<std::string> topic;  // the kafka_topic column's value (tables holding several topics)
  // Format v3 rewrites (thaw maintain): when set, the file also gets the
  // spec's row lineage columns _row_id (field id 2147483540) and
  // _last_updated_sequence_number (2147483539), optional longs, filled for
  // each appended record with what this returns (nullopt writes null).
  std::function<std::pair<std::optional<int64_t>, std::optional<int64_t>>(const records::Record&)> row_lineage;
};

class DataFileWriter {
 public:
  // `schema` is the table's current schema (canonical layout, resolved by
  // field id); `partition` the partition tuple the file belongs to (one Datum
  // per spec field), carried into the DataFile.
  static Result<std::unique_ptr<DataFileWriter>> Make(storage::FileIO& io, const std::string& location,
                                                      const iceberg::Schema& schema, int32_t spec_id,
                                                      std::vector<iceberg::Datum> partition,
                                                      DataFileWriterOptions options = {});
  virtual ~DataFileWriter() = default;

  // Appends the records of `batch` [begin, end) (copied; the batch may be
  // released afterwards).
  virtual Status Append(const records::RecordBatch& batch, size_t begin, size_t end) = 0;
  // The same for a table with the row layout's `value` struct (field id 12):
  // `decoded` holds one row per record of [begin, end).
  virtual Status AppendDecoded(const records::RecordBatch& batch, size_t begin, size_t end,
                               const DecodedValues& decoded) = 0;
  // Bytes appended so far (uncompressed key + value + headers), and the
  // file's size so far (row groups written), for rolling by target size.
  virtual int64_t appended_bytes() const = 0;
  virtual int64_t written_bytes() const = 0;
  virtual int64_t record_count() const = 0;
  // Writes the footer and closes the file (it exists only now); returns the
  // DataFile for the manifest (format parquet, record count, file size,
  // metrics, partition, spec id).
  virtual Result<iceberg::DataFile> Finish() = 0;
  // Drops the file (nothing is left at `location`).
  virtual void Abort() = 0;
};

// The canonical layout's Iceberg schema JSON (docs/layouts.md), with the
// `kafka_topic` column (id 11, string, required) when `with_topic`.
std::string CanonicalSchemaJson(bool with_topic);

}  // namespace thaw::parquet

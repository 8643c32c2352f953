// The row layout's values (`thaw archive --layout thaw-row`, docs/layouts.md
// "thaw-row"): each record's value decoded into the table's `value` struct
// (field id 12), and `value_raw` (field id 6) kept only where the reader,
// re-encoding that struct, would not give the original bytes back.
//
// A value format plugs in as a ValueCodec: it decodes one value into an
// arrow::StructBuilder of the value type, and re-encodes rows of the struct
// array built from them exactly as Thaw's reader presents a row without
// value_raw. RowValueDecoder runs a codec over records and decides
// value_raw. JSON is here (schema inferred from the first records); Avro
// (records/avro_value.h) plugs in the same way.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/iceberg/schema.h"
#include "thaw/parquet/data_file_writer.h"
#include "thaw/records/record.h"

namespace arrow {
class Array;
class DataType;
class StructBuilder;
}  // namespace arrow

namespace thaw::archive {

// Field ids of the row layout beyond the canonical ones.
inline constexpr int32_t kValueRawFieldId = 6;           // binary, optional: the original bytes when needed
inline constexpr int32_t kValueFieldId = 12;             // struct, optional: the decoded value
inline constexpr int32_t kValueSchemaIdFieldId = 13;     // int, optional: the value's schema registry id
inline constexpr int32_t kKeyDecodedFieldId = 14;        // struct, optional: the decoded key (--key-format registry)
inline constexpr int32_t kKeySchemaIdFieldId = 15;       // int, optional: the key's schema registry id
inline constexpr int32_t kFirstValueFieldId = 100;       // the value struct's fields: 100 upward, depth-first
inline constexpr char kRowLayoutValue[] = "thaw-row/1";  // table property thaw.layout
inline constexpr char kValueFormatKey[] = "thaw.row.value-format";  // json | avro
// JSON: the schema is inferred from at most this many first non-null values.
inline constexpr size_t kInferenceRecords = 1000;

// One value format. Implementations hold the table's value type (an
// Iceberg struct with field ids) and are used from one thread.
class ValueCodec {
 public:
  virtual ~ValueCodec() = default;

  // "json" or "avro" (the table property thaw.row.value-format).
  virtual std::string format() const = 0;
  // The table's `value` struct type.
  virtual const iceberg::TypePtr& value_type() const = 0;

  // Decodes `bytes` and appends it as one row of `builder` (whose type is
  // parquet::ArrowTypeOf(*value_type())), returning true; or returns false,
  // having appended nothing, when `bytes` is not a value of this format (not
  // JSON / not an object; not a datum of the Avro schema). A value that
  // decodes but does not fit the type exactly (unknown fields, other types)
  // may be appended as far as it fits: the re-encoding check then keeps its
  // bytes in value_raw. An error Status stops the archive (out of memory).
  virtual Result<bool> Decode(std::string_view bytes, arrow::StructBuilder* builder) = 0;

  // The schema registry id a decoded value was framed with, for the
  // value_schema_id column (formats read through a registry); nullopt
  // otherwise.
  virtual std::optional<int32_t> SchemaId(std::string_view bytes) const {
    (void)bytes;
    return std::nullopt;
  }

  // Prepares to re-encode the rows of `values` (a struct array built by
  // Decode, as the reader will read it back); `schema_ids` are SchemaId of
  // each row's value (nullopt for rows not decoded).
  virtual Status BindEncoder(const std::shared_ptr<arrow::Array>& values,
                             const std::vector<std::optional<int32_t>>& schema_ids) = 0;
  // Appends row `row` of the bound array, encoded exactly as Thaw's reader
  // yields a row whose value_raw is null (replay, serve, inspect); false
  // when the reader would yield no value (a tombstone).
  virtual bool Encode(int64_t row, std::string* out) = 0;
};

// JSON values: objects decoded field by field by name into the value type
// (boolean, long, double, string, struct, list; see InferJsonValueType),
// re-encoded by the reader's JsonRowBuilder (records/json_row.h, unwrap).
// Fails when the type holds a type the JSON decoder cannot fill.
Result<std::unique_ptr<ValueCodec>> MakeJsonValueCodec(iceberg::TypePtr value_type);

// The codec of a row table's value format (its thaw.row.value-format
// property; `properties` are the table's, e.g. thaw.row.avro-schema):
// "json" -> MakeJsonValueCodec; other formats are Unsupported until their
// codec is registered here (Avro: records/avro_value.h).
Result<std::unique_ptr<ValueCodec>> MakeValueCodec(const std::string& format, iceberg::TypePtr value_type,
                                                   const std::map<std::string, std::string>& properties);

// Infers the value struct from sample values (docs/layouts.md "thaw-row"):
// the JSON objects among them (other values are ignored); their keys in
// first-seen order (keys starting "__" are left out at the top level: the
// reader treats them as writer internals); per key, merged over all
// samples: true/false -> boolean, integers -> long, numbers with a fraction
// or exponent (or a mix with integers) -> double, strings -> string,
// objects -> struct (merged the same way), arrays -> list of the merged
// element type; nulls add nothing; a key seen only as null, as an empty
// array's element, as an empty object, or with conflicting kinds (e.g.
// string and number, object and array) -> string (holding the JSON text of
// non-string values). Every field is optional; ids from kFirstValueFieldId
// upward, depth-first. NotFound when no sample is a JSON object with a key.
Result<iceberg::TypePtr> InferJsonValueType(const std::vector<std::string_view>& samples);

// The row layout's schema JSON: the canonical columns (ids 1-5, 7-10; 11
// kafka_topic when `with_topic`), 6 `value_raw` (binary), 12 `value`, 13
// `value_schema_id` (int) when `with_schema_id` (values read through a
// schema registry), and 14 `key_decoded` (of `key_type`) with 15
// `key_schema_id` when `key_type` is given (keys read through a registry).
// `schema_id` is the schema's "schema-id".
std::string RowSchemaJson(bool with_topic, const iceberg::Type& value_type, bool with_schema_id = false,
                          int32_t schema_id = 0, const iceberg::Type* key_type = nullptr);

// Runs a codec over records and decides value_raw (for
// parquet::DataFileWriter::AppendDecoded); with a `key_codec`, also decodes
// the keys into key_decoded (the key bytes stay in `key` whatever happens).
class RowValueDecoder {
 public:
  static Result<std::unique_ptr<RowValueDecoder>> Make(std::unique_ptr<ValueCodec> codec,
                                                       std::unique_ptr<ValueCodec> key_codec = nullptr);
  ~RowValueDecoder();

  // Decodes the values of records [begin, end): a null value is a null
  // struct (a tombstone: both columns null); a value that does not decode is
  // a null struct with value_raw; a decoded value keeps value_raw unless its
  // re-encoding equals the original bytes.
  Result<parquet::DecodedValues> Decode(const records::RecordBatch& batch, size_t begin, size_t end);

  ValueCodec& codec() { return *codec_; }

  // Counts since Make: values decoded, values that did not decode, values
  // kept in value_raw (not decoded or not reproduced); keys decoded, and
  // keys (not null) that did not decode.
  struct Counts {
    int64_t decoded = 0, undecodable = 0, kept_raw = 0, keys_decoded = 0, keys_undecodable = 0;
    Counts& operator+=(const Counts& o) {
      decoded += o.decoded;
      undecodable += o.undecodable;
      kept_raw += o.kept_raw;
      keys_decoded += o.keys_decoded;
      keys_undecodable += o.keys_undecodable;
      return *this;
    }
  };
  const Counts& counts() const { return counts_; }

 private:
  RowValueDecoder() = default;
  std::unique_ptr<ValueCodec> codec_, key_codec_;
  std::unique_ptr<arrow::StructBuilder> builder_, key_builder_;
  std::string scratch_;
  Counts counts_;
};

}  // namespace thaw::archive

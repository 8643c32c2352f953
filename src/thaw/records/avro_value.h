// Kafka record values in Avro binary (the row layout's `value` struct with
// thaw.row.value-format=avro): the writer schema mapped to an Iceberg struct,
// a datum decoded into Arrow builders of that struct, and a row of the struct
// encoded back to the Avro datum so replay and serve give the value's bytes.
//
// Type mapping (Avro -> Iceberg, Arrow):
//   record -> struct; boolean, int, long, float, double -> the same;
//   string, enum (symbol name) -> string; bytes -> binary; fixed[n] -> fixed[n];
//   decimal (bytes or fixed, precision <= 38) -> decimal(p, s);
//   date -> date; time-millis, time-micros -> time (microseconds);
//   timestamp-millis/-micros -> timestamptz, or timestamp when the schema says
//   "adjust-to-utc": false; local-timestamp-millis/-micros -> timestamp;
//   uuid, timestamp-nanos and other logical types -> their underlying type
//   (a uuid string stays a string, so its text round-trips exactly; resolved
//   against a table's uuid or nanosecond timestamp column -- the schema
//   records/avro_derive.h derives from it -- a string uuid and a long
//   (local-)timestamp-nanos read and write that column);
//   array -> list; map -> map<string, V>;
//   [null, T] (either order) -> optional T; a union of one type -> that type;
//   other unions -> struct<tag int, field0 T0, field1 T1, ...> with one fieldK
//   per non-null branch in order, `tag` the index among those branches, and
//   the struct null for the null branch (the shape Iceberg's Spark and Trino
//   readers give Avro unions).
// A decimal wider than Iceberg's 38 digits (or with invalid attributes, which
// void the logical type per the Avro spec) stays bytes / fixed. Rejected with
// an error naming the field: null-typed fields, unions of null alone, records
// with no fields, fixed[0] (Parquet cannot store the last two), recursive
// types. The top level must be a record (its fields become the struct's).
//
// Field ids are assigned depth-first (pre-order) from `first_field_id`: a
// field takes the next id, then the fields nested in its type do; a list's
// element and a map's key and value take ids like fields.
//
// Decoding is bounded: every value of a mappable schema occupies at least one
// byte, so array/map counts and lengths are checked against the bytes that
// remain before anything is allocated, and nesting is bounded by the schema
// parser's depth limit. A datum is validated completely before anything is
// appended, so an error leaves the builder unchanged.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "thaw/common/status.h"
#include "thaw/iceberg/avro/avro.h"
#include "thaw/iceberg/schema.h"
#include "thaw/records/framed_value.h"
#include "thaw/records/schema_references.h"

namespace arrow {
class DataType;
class StructArray;
class StructBuilder;
}  // namespace arrow

namespace thaw::records {

// Confluent Schema Registry framing: magic byte 0, then the writer schema's
// registry id as 4 bytes big-endian, then the Avro datum.
inline constexpr size_t kConfluentHeaderSize = 5;
// The schema id of a value with the Confluent header; nullopt when the value
// is shorter than the header or its first byte is not 0.
std::optional<int32_t> ConfluentSchemaId(std::string_view value);

class AvroValueSchema {
 public:
  // Parses the writer schema (Avro schema JSON text) and maps it; the
  // struct's field ids start at `first_field_id`.
  // `references`: schemas defining named types it uses (a schema registry's
  // references, dependencies first).
  static Result<std::shared_ptr<const AvroValueSchema>> Make(std::string_view avro_schema_json, int32_t first_field_id,
                                                             const SchemaReferences& references = {});
  ~AvroValueSchema();

  // The writer schema resolved against a table's value struct by field
  // name (schema evolution: the table may hold fields this schema lacks,
  // which decode as null; they must be optional). iceberg_type() and
  // arrow_type() are then the table's; Decode appends to a builder of the
  // table's struct; Encode finds each field's column by name, so struct
  // arrays of older files (without later fields) encode too. NotFound when
  // the schema has a field the table lacks (Evolve adds it); Invalid, naming
  // the field, when a field's type or optionality differs.
  static Result<std::shared_ptr<const AvroValueSchema>> Resolve(std::string_view avro_schema_json,
                                                                const iceberg::TypePtr& table_type,
                                                                const SchemaReferences& references = {});
  // The table's value struct with the writer schema's fields it lacks added
  // (at the end of their struct, optional, ids from *next_id upward,
  // depth-first); fields present in both are kept as the table has them.
  static Result<iceberg::TypePtr> Evolve(const iceberg::TypePtr& table_type, std::string_view avro_schema_json,
                                         int32_t* next_id, const SchemaReferences& references = {});

  // The schema JSON as given (for the thaw.row.avro-schema property).
  const std::string& schema_json() const { return schema_json_; }
  const avro::Schema& avro_schema() const { return *avro_; }
  // The struct type (fields with ids; required unless the Avro type is a
  // union with null).
  const iceberg::TypePtr& iceberg_type() const { return iceberg_type_; }
  // The same struct as Arrow, every field carrying "PARQUET:field_id".
  const std::shared_ptr<arrow::DataType>& arrow_type() const { return arrow_type_; }
  // The highest field id assigned (first_field_id - 1 if none: not possible,
  // a record has at least one field).
  int32_t last_field_id() const { return last_field_id_; }

  Result<std::unique_ptr<arrow::StructBuilder>> MakeBuilder() const;
  // OK when `table_type` (a table's value struct) is exactly iceberg_type():
  // the same fields with the same names, ids, optionality and types; else an
  // error naming the first field that differs.
  Status CheckMatches(const iceberg::Type& table_type) const;

  // Decodes one datum and appends it as one non-null row to `builder` (of
  // arrow_type()). With `framed`, the datum starts with the Confluent header
  // and its schema id is stored in *schema_id (when not null). The whole
  // datum must be consumed. Errors say what is wrong, the field and the byte
  // position within `datum`; nothing is appended then.
  Status Decode(std::string_view datum, bool framed, arrow::StructBuilder* builder,
                std::optional<int32_t>* schema_id = nullptr) const;
  // The checks of Decode without a builder.
  Status Validate(std::string_view datum, bool framed, std::optional<int32_t>* schema_id = nullptr) const;

  // Appends row `row` of `value` (a struct array of arrow_type(), or that type
  // as read back from Parquet) as an Avro datum to *out, preceded by the
  // Confluent header when `schema_id` is given. Arrays are written as one
  // block (count, items, 0) and decimals in their shortest two's complement,
  // as Java's and fastavro's encoders write them; a datum another encoder
  // wrote differently does not come back byte for byte (the writer keeps its
  // raw bytes then). A null row is an error (it has no datum).
  // `fields`: the caller's cache of `value`'s struct children across the
  // rows of a batch (struct_fields.h; null: none).
  Status Encode(const arrow::StructArray& value, int64_t row, std::optional<int32_t> schema_id, std::string* out,
                StructFields* fields = nullptr) const;

  struct Node;

 private:
  AvroValueSchema();

  std::string schema_json_;
  avro::SchemaPtr avro_;
  iceberg::TypePtr iceberg_type_;
  std::shared_ptr<arrow::DataType> arrow_type_;
  int32_t last_field_id_ = 0;
  std::unique_ptr<Node> root_;
};

// An Avro schema as the FramedValueCodec of its registry id (a resolved one:
// AvroValueSchema::Resolve).
std::shared_ptr<const FramedValueCodec> AvroFramed(std::shared_ptr<const AvroValueSchema> schema);

}  // namespace thaw::records

// Kafka record values in Protobuf, framed for a schema registry (the row
// layout through a registry, archive/row_registry.h): the registry's .proto
// text parsed with Debian's libprotobuf (compiler::Parser, a DescriptorPool
// over the generated pool, so the well-known types import), a message type
// of it mapped to an Iceberg struct, values decoded with dynamic messages
// into Arrow builders, and rows encoded back to the framed value.
//
// Mapping (Protobuf -> Iceberg), every field optional (its column null when
// a field with presence is absent):
//   message -> struct (fields in declaration order; oneof members are plain
//   fields); bool, float, double, string, bytes -> the same; int32, sint32,
//   sfixed32 -> int; int64, sint64, sfixed64, uint32, fixed32 -> long;
//   uint64, fixed64 -> long (a value above 2^63-1 does not decode); enum ->
//   string (the value's name; a number without a name does not decode);
//   repeated T -> list<T> (required elements); map<K, V> -> map<K', V'>.
// Refused, naming the field: groups, recursive messages. Field ids are
// assigned depth-first from `first_field_id`, as for Avro.
//
// Encoding is deterministic serialization (fields by number, packed
// repeated scalars, map entries sorted by key), which is what Protobuf's
// serializers write for a message without unknown fields and with maps of
// at most one entry; any other value keeps its bytes (value_raw).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/iceberg/schema.h"
#include "thaw/records/framed_value.h"
#include "thaw/records/schema_references.h"

namespace arrow {
class DataType;
class StructBuilder;
}  // namespace arrow

namespace thaw::records {

class ProtobufValueSchema : public FramedValueCodec {
 public:
  // The message at `message_indexes` (the framing's path: [i] the file's
  // i-th message, [i, j] its j-th nested message…) of the .proto text,
  // mapped on its own (a new table's struct), ids from `first_field_id`.
  // `references`: the files it imports (by their import paths) other than
  // the well-known types, dependencies first.
  static Result<std::shared_ptr<const ProtobufValueSchema>> Make(std::string_view proto_text,
                                                                 std::span<const int32_t> message_indexes,
                                                                 int32_t first_field_id,
                                                                 const SchemaReferences& references = {});
  // The message named `message_name` (full name, "pkg.Order") of the .proto
  // text resolved against a table's value struct by field name, as
  // AvroValueSchema::Resolve: NotFound when the message has a field the
  // table lacks (Evolve adds it), Invalid naming a field of another type.
  static Result<std::shared_ptr<const ProtobufValueSchema>> Resolve(std::string_view proto_text,
                                                                    const std::string& message_name,
                                                                    const iceberg::TypePtr& table_type,
                                                                    const SchemaReferences& references = {});
  // The table's struct with the message's fields it lacks added (optional,
  // ids from *next_id upward).
  static Result<iceberg::TypePtr> Evolve(const iceberg::TypePtr& table_type, std::string_view proto_text,
                                         const std::string& message_name, int32_t* next_id,
                                         const SchemaReferences& references = {});

  // The full names of the .proto text's top-level messages, in order.
  static Result<std::vector<std::string>> MessageNames(std::string_view proto_text,
                                                      const SchemaReferences& references = {});

  ~ProtobufValueSchema() override;

  std::string_view format() const override { return "protobuf"; }
  const std::string& schema_text() const override { return text_; }
  // The message's full name and its index path in the file.
  const std::string& message_name() const;
  const std::vector<int32_t>& message_indexes() const { return indexes_; }
  const iceberg::TypePtr& iceberg_type() const { return type_; }
  const std::shared_ptr<arrow::DataType>& arrow_type() const { return arrow_type_; }

  // Framed: magic byte, id, message indexes, body. A value whose indexes
  // name another message is Corrupt.
  Status DecodeFramed(std::string_view value, arrow::StructBuilder* builder) const override;
  Status EncodeFramed(const arrow::StructArray& values, int64_t row, int32_t schema_id, std::string* out,
                      StructFields* fields) const override;

  struct Impl;

 private:
  ProtobufValueSchema();
  std::string text_;
  std::vector<int32_t> indexes_;
  iceberg::TypePtr type_;
  std::shared_ptr<arrow::DataType> arrow_type_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace thaw::records

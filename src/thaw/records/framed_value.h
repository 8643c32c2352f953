// One writer schema of a schema registry id, resolved against a table's
// value struct (the row layout through a registry, archive/row_registry.h):
// decodes a framed value (Confluent's wire format: magic byte 0, the id,
// for Protobuf the message indexes, then the body) into a row of the
// struct, and encodes a row back to the framed value. Avro
// (records/avro_value.h) and Protobuf (records/protobuf_value.h) implement
// it; the reader keeps one per id (Layout::value_by_id).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "thaw/common/status.h"
#include "thaw/iceberg/schema.h"
#include "thaw/records/schema_references.h"

namespace arrow {
class StructArray;
class StructBuilder;
}  // namespace arrow

namespace thaw::records {

class StructFields;  // struct_fields.h


class FramedValueCodec {
 public:
  virtual ~FramedValueCodec() = default;
  // "avro", "protobuf" or "json-schema".
  virtual std::string_view format() const = 0;
  // The registry's schema text.
  virtual const std::string& schema_text() const = 0;
  // Appends `value` (framed with this schema's id) as one row of `builder`
  // (the table's value struct). Corrupt, appending nothing, when it is not a
  // value of this schema; other errors stop the caller.
  virtual Status DecodeFramed(std::string_view value, arrow::StructBuilder* builder) const = 0;
  // Appends row `row` of `values` framed with `schema_id` to *out; an error
  // when the row cannot be written with this schema (*out unchanged).
  // `fields`: the caller's cache of `values`' struct children, kept across
  // the rows of a batch (null: none).
  virtual Status EncodeFramed(const arrow::StructArray& values, int64_t row, int32_t schema_id, std::string* out,
                              StructFields* fields) const = 0;
};

// The table properties of a row table read through a registry that hold
// its writer schemas: this prefix + the schema id ("thaw.row.avro-schema."
// for format "avro", "thaw.row.proto-schema." for "protobuf",
// "thaw.row.json-schema." for "json-schema"). A key's schemas (`thaw
// archive --key-format registry`) have their own: "thaw.row.key-avro-schema."
// and so on.
std::string_view SchemaPropertyPrefix(std::string_view format, bool key = false);

// The writer schemas among `properties` (keys SchemaPropertyPrefix(format,
// key) + id), by id. Corrupt, naming the key, for an id that is not a number.
Result<std::map<int32_t, std::string>> SchemaTextsById(const std::map<std::string, std::string>& properties,
                                                       std::string_view format, bool key = false);

// Schema `text` of `format` ("avro", or "protobuf" with the table's message
// type `message_name`) resolved against the table's value struct by field
// name (AvroValueSchema::Resolve, ProtobufValueSchema::Resolve).
// `references`: the schemas it refers to.
Result<std::shared_ptr<const FramedValueCodec>> ResolveFramed(std::string_view format, const std::string& text,
                                                              const std::string& message_name,
                                                              const iceberg::TypePtr& value_type,
                                                              const SchemaReferences& references = {});

}  // namespace thaw::records

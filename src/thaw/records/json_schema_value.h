// JSON Schema values read through a schema registry (`thaw archive --layout
// thaw-row --value-format registry`, docs/schema-registry.md): the writer
// schema, a JSON Schema document, mapped to the table's value struct, and a
// FramedValueCodec that decodes Confluent-framed JSON values into it and
// encodes rows back the way a JVM producer writes them (compact JSON, the
// schema's properties in its order, Java's number formatting).
//
// The mapping (docs/layouts.md, "thaw-row"): object -> struct (every field
// optional: JSON may omit any), array -> list, string -> string, integer ->
// long, number -> double, boolean -> boolean; a type list or a oneOf/anyOf
// with "null" is that type; "$ref" to "#/definitions/NAME" or "#/$defs/NAME"
// is followed. Anything else (an object without properties, a union of two
// types, a reference to another document) is Unsupported, naming where.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/iceberg/schema.h"
#include "thaw/records/framed_value.h"
#include "thaw/records/schema_references.h"

namespace thaw::records {

class JsonSchemaValue : public FramedValueCodec {
 public:
  // A node of the mapped schema: a struct's fields in the schema's order.
  struct Node {
    iceberg::TypeId kind = iceberg::TypeId::kUnknown;
    std::string name;          // a struct field's property name
    std::vector<Node> fields;  // struct
    std::vector<Node> element; // list: one
  };

  // The value struct of a new table from the writer schema; field ids from
  // `first_field_id` upward, depth-first.
  // `references`: the documents its $refs name (by the reference's name,
  // e.g. "customer.json" or "customer.json#/$defs/Customer").
  static Result<std::shared_ptr<const JsonSchemaValue>> Make(std::string_view schema_text, int32_t first_field_id,
                                                             const SchemaReferences& references = {});
  // The writer schema resolved against a table's value struct by name (the
  // table may hold fields the schema lacks: they decode as null). NotFound
  // when the schema has a property the table lacks (Evolve adds it); Invalid,
  // naming the field, when a type differs.
  static Result<std::shared_ptr<const JsonSchemaValue>> Resolve(std::string_view schema_text,
                                                                const iceberg::TypePtr& table_type,
                                                                const SchemaReferences& references = {});
  // The table's value struct with the schema's properties it lacks added (at
  // the end of their struct, optional, ids from *next_id upward).
  static Result<iceberg::TypePtr> Evolve(const iceberg::TypePtr& table_type, std::string_view schema_text,
                                         int32_t* next_id, const SchemaReferences& references = {});

  JsonSchemaValue(std::string text, Node root, iceberg::TypePtr type);

  std::string_view format() const override { return "json-schema"; }
  const std::string& schema_text() const override { return text_; }
  const iceberg::TypePtr& iceberg_type() const { return type_; }
  Status DecodeFramed(std::string_view value, arrow::StructBuilder* builder) const override;
  Status EncodeFramed(const arrow::StructArray& values, int64_t row, int32_t schema_id, std::string* out,
                      StructFields* fields) const override;

 private:
  std::string text_;
  Node root_;
  iceberg::TypePtr type_;
};

// A JSON Schema (draft-07) for the JSON Thaw writes for `value_struct`
// (docs/layouts.md, "Rows as JSON"): struct -> object, list -> array, map
// with string keys -> object of values, other maps -> array of key/value
// objects, boolean, int/long -> integer, float/double -> number, every other
// type -> string; optional fields as oneOf null. `title` names it.
Result<std::string> DeriveJsonSchema(const iceberg::Type& value_struct, const std::string& title);

}  // namespace thaw::records

// Values framed for a Confluent-compatible schema registry in the row
// layout (`thaw archive --layout thaw-row --value-format registry`,
// docs/schema-registry.md): each value's schema id is read from its framing,
// its writer schema fetched once from the registry and resolved against the
// table's `value` struct by field name, the value decoded into that struct,
// and the id kept in the row's `value_schema_id` column so the reader
// re-encodes the exact value with the exact framing.
//
// A table holds one format: Avro (thaw.row.value-format=avro, the writer
// schemas as properties thaw.row.avro-schema.<ID>), Protobuf
// (thaw.row.value-format=protobuf, one message type named by
// thaw.row.proto-message, the .proto texts as thaw.row.proto-schema.<ID>)
// or JSON Schema (thaw.row.value-format=json-schema, the schemas as
// thaw.row.json-schema.<ID>; the schemas each refers to as
// thaw.row.schema-refs.<ID>), so replay, serve and inspect need no registry
// to give the original bytes back. A schema with fields the table lacks, or
// that widens a field, evolves the table (archiver.cc commits the new schema
// before such values are written) when every schema the table holds still
// reads the evolved columns; a schema the table cannot take (a field of
// another type, an unknown id or reference, another format, another message
// type) leaves its values in value_raw, said once in the log.
//
// Keys framed the same way (`--key-format registry`) are decoded by a
// second RegistrySchemas into the `key_decoded` struct (field id 14) with
// their id in `key_schema_id` (15); their properties are the same with
// "key-" (thaw.row.key-format, thaw.row.key-avro-schema.<ID>, ...). The
// key's bytes always stay in `key` as well: Kafka partitions by those bytes,
// so replay and serve give them back as they came, and keys are small. An
// Avro key schema that is not a record (a "string" or "long" key, the most
// common kind) decodes as a struct of one field named `key`.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "thaw/archive/row_value.h"
#include "thaw/records/framed_value.h"

namespace thaw::registry {
class SchemaRegistry;
}

namespace thaw::archive {

// The writer schemas' properties: records::SchemaPropertyPrefix(format, key) + id.
inline constexpr char kValueSchemasKey[] = "thaw.row.value-schemas";  // "registry": ids per row
inline constexpr char kProtoMessageKey[] = "thaw.row.proto-message";  // the message type's full name
inline constexpr char kKeyFormatKey[] = "thaw.row.key-format";        // the keys': avro | protobuf | json-schema
inline constexpr char kKeySchemasKey[] = "thaw.row.key-schemas";      // "registry"
inline constexpr char kKeyProtoMessageKey[] = "thaw.row.key-proto-message";

// What a new table's value (or key) struct is made of: the schema of its
// first framed value (key).
struct RegistryValueType {
  iceberg::TypePtr type;
  std::string format;        // "avro", "protobuf" or "json-schema"
  std::string message_name;  // protobuf: the message's full name
  bool key = false;          // a key's struct
  // The table properties that say so (format, message name).
  std::map<std::string, std::string> properties() const;
};

// The writer schemas seen so far, resolved against the table's value type.
// Prepare runs on the archive loop's thread; Get on the writer threads.
class RegistrySchemas {
 public:
  // `format` "avro", "protobuf" or "json-schema"; `message_name` the
  // Protobuf message type; `key`: the schemas of keys (key_decoded).
  RegistrySchemas(std::shared_ptr<registry::SchemaRegistry> registry, iceberg::TypePtr value_type, std::string format,
                  std::string message_name, bool key = false);

  // The writer schemas a table already holds (its properties), resolved
  // against the value type. Schemas that do not resolve (an evolution that
  // had not committed when a run stopped) are left to Prepare.
  Status Load(const std::map<std::string, std::string>& table_properties);

  enum class Outcome {
    kKnown,    // seen before: nothing to do
    kReady,    // new, decodes into the current value type: commit its text with the next data
    kEvolve,   // new, with fields the table lacks: *evolved is the value type with them
    kRefused,  // its values stay in value_raw; *why says why (log it once)
  };
  // The schema of `id`: fetched from the registry when new. A registry that
  // is down or answers 5xx is an error (the archive stops, committing
  // nothing of these records: rerun resumes); an unknown id (404) is
  // kRefused. `next_field_id` is the table's last-column-id + 1.
  Result<Outcome> Prepare(int32_t id, int32_t next_field_id, iceberg::TypePtr* evolved, std::string* why);
  // After a schema-evolution commit: resolves every schema against the new type.
  Status SetValueType(iceberg::TypePtr value_type);

  // The resolved schema of `id`; null for an id refused or not prepared.
  std::shared_ptr<const records::FramedValueCodec> Get(int32_t id) const;
  // Texts of ids prepared since the last call (table properties to commit).
  std::map<std::string, std::string> TakeNewProperties();
  const iceberg::TypePtr& value_type() const { return value_type_; }

  // A new table's value type from its first framed value (`value`, whose
  // schema id is `id`), ids from `first_field_id`; `key`: a key's type.
  // Unsupported (with the reason) when that schema cannot make a table.
  static Result<RegistryValueType> NewTableType(registry::SchemaRegistry& registry, int32_t id,
                                                std::string_view value, int32_t first_field_id, bool key = false);

  // "key" or "value": what the schemas are of, for messages.
  const char* role() const { return key_ ? "key" : "value"; }

 private:
  // The text the codecs parse: a key's Avro schema that is not a record wrapped in one.
  std::string CodecText(const std::string& text) const;
  Result<std::shared_ptr<const records::FramedValueCodec>> ResolveText(const std::string& text,
                                                                       const records::SchemaReferences& refs,
                                                                       const iceberg::TypePtr& type) const {
    return records::ResolveFramed(format_, CodecText(text), message_name_, type, refs);
  }
  Result<iceberg::TypePtr> EvolveText(const std::string& text, const records::SchemaReferences& refs,
                                      int32_t* next_id) const;
  // The properties that keep schema `id`: its text, and its references when it has any.
  void KeepProperties(int32_t id, const std::string& text, const records::SchemaReferences& refs);
  std::string PropertyKey(int32_t id) const {
    return std::string(records::SchemaPropertyPrefix(format_, key_)) + std::to_string(id);
  }

  std::shared_ptr<registry::SchemaRegistry> registry_;
  iceberg::TypePtr value_type_;
  std::string format_, message_name_;
  bool key_ = false;
  mutable std::mutex mu_;
  std::map<int32_t, std::string> texts_;                                            // resolved ones
  std::map<int32_t, records::SchemaReferences> refs_;                              // their references
  std::map<int32_t, std::shared_ptr<const records::FramedValueCodec>> resolved_;  // guarded by mu_
  std::map<int32_t, std::string> refused_;                                          // id -> why
  std::map<std::string, std::string> new_properties_;
};

// A key's Avro schema text as a record: itself when it is one, else a
// record of one field `key` of that schema (the same binary encoding).
std::string AvroKeyRecordText(const std::string& text);

// A ValueCodec over RegistrySchemas: decodes framed values by their id.
std::unique_ptr<ValueCodec> MakeRegistryCodec(std::shared_ptr<const RegistrySchemas> schemas);

}  // namespace thaw::archive

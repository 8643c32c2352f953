// Values framed for a Confluent-compatible schema registry in the row
// layout (`thaw archive --layout row --value-format registry`,
// docs/schema-registry.md): each value's schema id is read from its framing,
// its writer schema fetched once from the registry and resolved against the
// table's `value` struct by field name, the value decoded into that struct,
// and the id kept in the row's `value_schema_id` column so the reader
// re-encodes the exact datum with the exact framing.
//
// The writer schemas of a table are its properties thaw.row.avro-schema.<ID>
// (the registry's text), so replay, serve and inspect need no registry to
// give the original bytes back. A schema with fields the table lacks evolves
// the table (archiver.cc commits the new schema before such values are
// written); a schema the table cannot take (a field of another type, an
// unknown id, Protobuf and JSON Schema for now) leaves its values in
// value_raw, said once in the log.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "thaw/archive/row_value.h"
#include "thaw/records/avro_value.h"

namespace thaw::registry {
class SchemaRegistry;
}

namespace thaw::archive {

inline constexpr char kValueSchemasKey[] = "thaw.row.value-schemas";        // "registry": ids per row
inline constexpr char kAvroSchemaByIdPrefix[] = "thaw.row.avro-schema.";    // + id: that writer schema

// The writer schemas seen so far, resolved against the table's value type.
// Prepare runs on the archive loop's thread; Get on the writer threads.
class RegistrySchemas {
 public:
  RegistrySchemas(std::shared_ptr<registry::SchemaRegistry> registry, iceberg::TypePtr value_type);

  // The writer schemas a table already holds (its thaw.row.avro-schema.<ID>
  // properties), resolved against `value_type`.
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
  // After a schema-evolution commit: resolves every schema against the new
  // type (an error if one no longer resolves: not expected, evolution only adds).
  Status SetValueType(iceberg::TypePtr value_type);

  // The resolved schema of `id`; null for an id refused or not prepared.
  std::shared_ptr<const records::AvroValueSchema> Get(int32_t id) const;
  // Texts of ids prepared since the last call (table properties to commit).
  std::map<std::string, std::string> TakeNewProperties();
  const iceberg::TypePtr& value_type() const { return value_type_; }

  // The writer schema of `id` mapped on its own (a new table's value type).
  Result<std::shared_ptr<const records::AvroValueSchema>> FetchStandalone(int32_t id, int32_t first_field_id);

 private:
  Result<std::string> FetchAvroText(int32_t id, std::string* why);

  std::shared_ptr<registry::SchemaRegistry> registry_;
  iceberg::TypePtr value_type_;
  mutable std::mutex mu_;
  std::map<int32_t, std::string> texts_;                                          // resolved ones
  std::map<int32_t, std::shared_ptr<const records::AvroValueSchema>> resolved_;  // guarded by mu_
  std::map<int32_t, std::string> refused_;                                        // id -> why
  std::map<std::string, std::string> new_properties_;
};

// A ValueCodec over RegistrySchemas: decodes framed Avro values by their id.
std::unique_ptr<ValueCodec> MakeRegistryAvroCodec(std::shared_ptr<const RegistrySchemas> schemas);

}  // namespace thaw::archive

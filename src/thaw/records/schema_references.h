// The schemas a registry schema refers to (Confluent's "references": a
// Protobuf file's imports, an Avro schema's named types defined under other
// subjects), resolved to their texts: what the codecs parse before the
// schema itself, so that a writer schema with references decodes and
// re-encodes like one without. Kept with a table as the property
// thaw.row.schema-refs.<ID> (JSON), so readers need no registry.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "thaw/common/status.h"

namespace thaw::records {

struct ReferencedSchema {
  std::string name;  // as the referring schema names it: the import path, the Avro full name
  std::string text;
  bool operator==(const ReferencedSchema&) const = default;
};
// Every schema a schema refers to, directly or through others, each once,
// a schema's own references before it.
using SchemaReferences = std::vector<ReferencedSchema>;

// The table property holding the references of schema `id`
// (thaw.row.schema-refs.<ID>; a key's schema: thaw.row.key-schema-refs.<ID>).
std::string ReferencesPropertyKey(int32_t id, bool key = false);
// `refs` as that property's JSON text ([{"name", "text"}, ...]) and back
// (Corrupt naming `key` when it is not that).
std::string ReferencesToJson(const SchemaReferences& refs);
Result<SchemaReferences> ReferencesFromJson(const std::string& json, const std::string& key);
// The schema id a table property `key` ends with after `prefix`
// ("thaw.row.avro-schema.12" -> 12); Corrupt naming the key otherwise.
Result<int32_t> SchemaIdOfProperty(std::string_view key, std::string_view prefix);
// The references of every schema id among `properties` (values' or keys').
Result<std::map<int32_t, SchemaReferences>> ReferencesById(const std::map<std::string, std::string>& properties,
                                                           bool key = false);

}  // namespace thaw::records

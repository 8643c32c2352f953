// The Avro schemas of manifests and manifest lists as Iceberg Java writes
// them (V2Metadata / V3Metadata field order, TypeToSchema names and logical
// types): spec field ids on every field, optional fields as ["null", T] with
// default null, record names manifest_entry / manifest_file / r2 / r102 /
// r508, int-keyed maps as arrays of k<key-id>_v<value-id> records with
// logicalType "map". Used by manifest_writer.cc.
#pragma once

#include <string>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/iceberg/avro/avro.h"
#include "thaw/iceberg/schema.h"

namespace thaw::iceberg {

// One field of a spec's partition struct: its partition field id, name and
// result type (PartitionFieldType).
struct PartitionStructField {
  int32_t field_id = 0;
  std::string name;
  TypePtr type;
};

// manifest_entry for format v2 or v3 with the given partition struct.
Result<avro::SchemaPtr> ManifestEntryAvroSchema(int format_version, const std::vector<PartitionStructField>& partition);
// manifest_file (a manifest list's records) for format v2 or v3.
Result<avro::SchemaPtr> ManifestListAvroSchema(int format_version);

// An Iceberg field name made a valid Avro name the way Java's
// AvroSchemaUtil.sanitize does ("1a.b" -> "_1a_x2Eb").
std::string SanitizeAvroName(const std::string& name);

}  // namespace thaw::iceberg

// Avro values for the row layout (`thaw archive --layout thaw-row --value-schema
// FILE.avsc`, docs/layouts.md "thaw-row"): records/avro_value.h as a
// ValueCodec (row_value.h). The table records the writer schema and, for
// Confluent-framed values, the schema registry id in its properties, so the
// reader re-encodes the `value` struct to the very same datum.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "thaw/archive/row_value.h"
#include "thaw/records/avro_value.h"

namespace thaw::archive {

inline constexpr char kAvroSchemaKey[] = "thaw.row.avro-schema";  // the writer schema JSON
// The Confluent schema registry id the values are framed with (magic byte 0,
// 4-byte big-endian id); absent: the values are bare Avro datums.
inline constexpr char kAvroSchemaIdKey[] = "thaw.row.avro-schema-id";

// Decodes values that are datums of `schema` (framed with `schema_id` when
// given: a value with another id, or unframed, does not decode and keeps its
// bytes in value_raw) and re-encodes rows with AvroValueSchema::Encode.
std::unique_ptr<ValueCodec> MakeAvroValueCodec(std::shared_ptr<const records::AvroValueSchema> schema,
                                               std::optional<int32_t> schema_id);

}  // namespace thaw::archive

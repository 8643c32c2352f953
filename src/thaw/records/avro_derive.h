// An Avro writer schema derived from an Iceberg struct, for re-encoding the
// decoded value columns of a table as Avro (replay and serve
// `--value-format avro` when the registry has no schema for them; the
// mapping is the inverse of records/avro_value.h's, so the derived schema
// resolves against the struct it came from):
//   struct -> record (nested ones named after their field, in the record's
//   namespace); boolean, int, long, float, double -> the same; string ->
//   string; binary -> bytes; fixed[n] -> fixed; decimal(p, s) -> bytes with
//   logicalType decimal; date -> int date; time -> long time-micros;
//   timestamptz -> long timestamp-micros; timestamp -> long
//   local-timestamp-micros; timestamptz_ns -> long timestamp-nanos;
//   timestamp_ns -> long local-timestamp-nanos; uuid -> string uuid (the
//   canonical text); list -> array; map<string, V> -> map;
//   an optional field or element -> ["null", T] with default null.
// Refused, naming the column: variant and geometry types, maps with
// non-string keys, and names that are not Avro names
// ([A-Za-z_][A-Za-z0-9_]*).
#pragma once

#include <string>

#include "thaw/common/status.h"
#include "thaw/iceberg/schema.h"

namespace thaw::records {

// The schema JSON text of a record named `full_name` ("ns.Name" or "Name")
// whose fields are those of `value_struct`.
Result<std::string> DeriveAvroSchema(const iceberg::Type& value_struct, const std::string& full_name);

}  // namespace thaw::records

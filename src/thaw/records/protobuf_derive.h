// A Protobuf schema (.proto text, proto3) derived from an Iceberg struct,
// for re-encoding the decoded value columns of a table as Protobuf (replay
// and serve `--value-format protobuf` when the registry has no schema for
// them). The mapping is the inverse of records/protobuf_value.h's, so the
// derived message resolves against the struct it came from:
//   struct -> message (nested ones declared inside their parent, named
//   after their field); boolean -> bool; int -> int32; long -> int64;
//   float, double, string -> the same; binary -> bytes; list<T> ->
//   repeated T; map<K, V> -> map<K, V> (K string, int, long or boolean);
//   every scalar field `optional` (a null column is an absent field, a zero
//   a present one; a null map value, which Protobuf cannot hold, is the
//   value type's default); fields numbered 1, 2, … in column order.
// Refused as well: two columns whose names differ only in case or
// underscores (proto3 takes them as the same name).
// Refused, naming the column (Protobuf has no such type; --value-format avro
// has logical types for them): date, time, timestamps, decimal, uuid,
// fixed, variant and geometry types; lists of lists or maps, maps of lists
// or maps, other map keys; names that are not Protobuf identifiers.
#pragma once

#include <string>

#include "thaw/common/status.h"
#include "thaw/iceberg/schema.h"

namespace thaw::records {

// The .proto text declaring message `full_name` ("pkg.Name": package pkg;
// "Name": no package) whose fields are those of `value_struct`.
Result<std::string> DeriveProtobufSchema(const iceberg::Type& value_struct, const std::string& full_name);

}  // namespace thaw::records

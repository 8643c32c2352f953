// Iceberg types as the Arrow types Thaw's writers build and hand to Parquet:
// every nested field carries its Iceberg field id (PARQUET:field_id), so the
// Parquet schema has the ids Iceberg readers resolve columns by.
#pragma once

#include <cstdint>
#include <memory>

#include "thaw/common/status.h"
#include "thaw/iceberg/schema.h"

namespace arrow {
class DataType;
class Field;
class KeyValueMetadata;
}  // namespace arrow

namespace thaw::parquet {

// The PARQUET:field_id metadata of a field.
std::shared_ptr<const arrow::KeyValueMetadata> FieldIdMetadata(int32_t id);

// The Arrow type of an Iceberg type: boolean, int, long, float, double,
// decimal, date, time, timestamp(tz) (microseconds), string, uuid (16-byte
// fixed), fixed, binary, struct, list, map. Other types (variant, geometry,
// nanosecond timestamps, unknown) are refused with the type named.
Result<std::shared_ptr<arrow::DataType>> ArrowTypeOf(const iceberg::Type& type);

// A field of `type` named `name` with field id `id`.
Result<std::shared_ptr<arrow::Field>> ArrowFieldOf(const iceberg::NestedField& field);

}  // namespace thaw::parquet

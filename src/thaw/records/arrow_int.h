// A non-null value of an Iceberg int or long column as the value codecs
// read it: int32 or int64 (a long column reads int32 from files written
// before the table widened it), else Invalid naming the column's type.
// Header-only: the codecs' fuzz targets compile them without the reader.
#pragma once

#include <arrow/array.h>

#include <cstdint>

#include "thaw/common/status.h"

namespace thaw::records {

inline Result<int64_t> GetIntOrLong(const arrow::Array& a, int64_t i) {
  switch (a.type_id()) {
    case arrow::Type::INT32: return static_cast<const arrow::Int32Array&>(a).Value(i);
    case arrow::Type::INT64: return static_cast<const arrow::Int64Array&>(a).Value(i);
    default: return Status::Invalid("column of type {} where the schema has an integer field", a.type()->ToString());
  }
}

}  // namespace thaw::records

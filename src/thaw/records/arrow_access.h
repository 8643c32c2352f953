// Reading Kafka fields out of decoded Arrow batches: columns found by a
// ColumnPath (field ids, names for id-less files), values as integers,
// timestamps in Kafka milliseconds, or byte views. Shared by the record
// reader and --where.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <arrow/array.h>
#include <arrow/record_batch.h>

#include "thaw/records/layout.h"

namespace thaw::records {

std::optional<int64_t> GetInt(const arrow::Array& a, int64_t i);
// Kafka milliseconds from a timestamp column (timestamps by their unit, longs as ms).
std::optional<int64_t> GetTimestampMs(const arrow::Array& a, int64_t i);
std::optional<std::string_view> GetBytes(const arrow::Array& a, int64_t i);

// A column of one Arrow batch reached through a ColumnPath; rows whose
// parent struct is null read as null.
struct Accessor {
  std::shared_ptr<arrow::Array> array;
  std::vector<std::shared_ptr<arrow::Array>> parents;
  bool IsNull(int64_t i) const {
    for (const auto& p : parents) if (p->IsNull(i)) return true;
    return array->IsNull(i);
  }
};

std::optional<Accessor> Resolve(const arrow::RecordBatch& batch, const ColumnPath& path);

}  // namespace thaw::records

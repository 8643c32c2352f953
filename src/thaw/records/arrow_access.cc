#include "thaw/records/arrow_access.h"

#include <arrow/type.h>

#include "thaw/common/civil_time.h"
#include "thaw/parquet/parquet_file.h"

namespace thaw::records {

namespace {
// Finds a child by Iceberg field id (or name for id-less files).
std::shared_ptr<arrow::Array> ChildOf(const std::shared_ptr<arrow::Array>& parent, int32_t id, const std::string& name) {
  if (parent->type_id() != arrow::Type::STRUCT) return nullptr;
  const auto& st = static_cast<const arrow::StructArray&>(*parent);
  const auto& ty = static_cast<const arrow::StructType&>(*parent->type());
  for (int f = 0; f < ty.num_fields(); ++f) {
    if (pq::FieldIdOf(*ty.field(f)) == id) return st.field(f);
  }
  for (int f = 0; f < ty.num_fields(); ++f) {
    if (pq::FieldIdOf(*ty.field(f)) < 0 && ty.field(f)->name() == name) return st.field(f);
  }
  return nullptr;
}

}  // namespace

std::optional<int64_t> GetInt(const arrow::Array& a, int64_t i) {
  if (a.IsNull(i)) return std::nullopt;
  switch (a.type_id()) {
    case arrow::Type::INT8: return static_cast<const arrow::Int8Array&>(a).Value(i);
    case arrow::Type::INT16: return static_cast<const arrow::Int16Array&>(a).Value(i);
    case arrow::Type::INT32: return static_cast<const arrow::Int32Array&>(a).Value(i);
    case arrow::Type::INT64: return static_cast<const arrow::Int64Array&>(a).Value(i);
    case arrow::Type::UINT8: return static_cast<const arrow::UInt8Array&>(a).Value(i);
    case arrow::Type::UINT16: return static_cast<const arrow::UInt16Array&>(a).Value(i);
    case arrow::Type::UINT32: return static_cast<const arrow::UInt32Array&>(a).Value(i);
    case arrow::Type::DATE32: return static_cast<const arrow::Date32Array&>(a).Value(i);
    case arrow::Type::TIMESTAMP: return static_cast<const arrow::TimestampArray&>(a).Value(i);
    default: return std::nullopt;
  }
}

// Kafka milliseconds from a timestamp column (timestamps by their unit, longs as ms).
std::optional<int64_t> GetTimestampMs(const arrow::Array& a, int64_t i) {
  auto v = GetInt(a, i);
  if (!v || a.type_id() != arrow::Type::TIMESTAMP) return v;
  switch (static_cast<const arrow::TimestampType&>(*a.type()).unit()) {
    case arrow::TimeUnit::SECOND: return *v * 1000;
    case arrow::TimeUnit::MILLI: return *v;
    case arrow::TimeUnit::MICRO: return FloorDiv(*v, 1000);
    case arrow::TimeUnit::NANO: return FloorDiv(*v, 1'000'000);
  }
  return v;
}

std::optional<std::string_view> GetBytes(const arrow::Array& a, int64_t i) {
  if (a.IsNull(i)) return std::nullopt;
  switch (a.type_id()) {
    case arrow::Type::BINARY: return static_cast<const arrow::BinaryArray&>(a).GetView(i);
    case arrow::Type::STRING: return static_cast<const arrow::StringArray&>(a).GetView(i);
    case arrow::Type::LARGE_BINARY: return static_cast<const arrow::LargeBinaryArray&>(a).GetView(i);
    case arrow::Type::LARGE_STRING: return static_cast<const arrow::LargeStringArray&>(a).GetView(i);
    case arrow::Type::BINARY_VIEW: return static_cast<const arrow::BinaryViewArray&>(a).GetView(i);
    case arrow::Type::STRING_VIEW: return static_cast<const arrow::StringViewArray&>(a).GetView(i);
    case arrow::Type::FIXED_SIZE_BINARY: return static_cast<const arrow::FixedSizeBinaryArray&>(a).GetView(i);
    default: return std::nullopt;
  }
}

std::optional<Accessor> Resolve(const arrow::RecordBatch& batch, const ColumnPath& path) {
  const auto& schema = *batch.schema();
  std::shared_ptr<arrow::Array> cur;
  for (int c = 0; c < schema.num_fields() && !cur; ++c) {
    if (pq::FieldIdOf(*schema.field(c)) == path.ids[0]) cur = batch.column(c);
  }
  for (int c = 0; c < schema.num_fields() && !cur; ++c) {
    if (pq::FieldIdOf(*schema.field(c)) < 0 && schema.field(c)->name() == path.names[0]) cur = batch.column(c);
  }
  if (!cur) return std::nullopt;
  Accessor acc;
  for (size_t k = 1; k < path.ids.size(); ++k) {
    acc.parents.push_back(cur);
    cur = ChildOf(cur, path.ids[k], path.names[k]);
    if (!cur) return std::nullopt;
  }
  acc.array = cur;
  return acc;
}

}  // namespace thaw::records

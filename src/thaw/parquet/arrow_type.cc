#include "thaw/parquet/arrow_type.h"

#include <arrow/type.h>
#include <arrow/util/key_value_metadata.h>

#include <string>

namespace thaw::parquet {

using iceberg::TypeId;

std::shared_ptr<const arrow::KeyValueMetadata> FieldIdMetadata(int32_t id) {
  return arrow::key_value_metadata({"PARQUET:field_id"}, {std::to_string(id)});
}

Result<std::shared_ptr<arrow::Field>> ArrowFieldOf(const iceberg::NestedField& field) {
  if (!field.type) return Status::Invalid("field '{}' (id {}) has no type", field.name, field.id);
  ASSIGN_OR_RAISE(auto type, ArrowTypeOf(*field.type));
  return arrow::field(field.name, std::move(type), !field.required, FieldIdMetadata(field.id));
}

Result<std::shared_ptr<arrow::DataType>> ArrowTypeOf(const iceberg::Type& type) {
  switch (type.id) {
    case TypeId::kBoolean:
      return arrow::boolean();
    case TypeId::kInt:
      return arrow::int32();
    case TypeId::kLong:
      return arrow::int64();
    case TypeId::kFloat:
      return arrow::float32();
    case TypeId::kDouble:
      return arrow::float64();
    case TypeId::kDecimal:
      return arrow::decimal128(type.precision, type.scale);
    case TypeId::kDate:
      return arrow::date32();
    case TypeId::kTime:
      return arrow::time64(arrow::TimeUnit::MICRO);
    case TypeId::kTimestamp:
      return arrow::timestamp(arrow::TimeUnit::MICRO);
    case TypeId::kTimestampTz:
      return arrow::timestamp(arrow::TimeUnit::MICRO, "UTC");
    case TypeId::kTimestampNs:
      return arrow::timestamp(arrow::TimeUnit::NANO);
    case TypeId::kTimestampTzNs:
      return arrow::timestamp(arrow::TimeUnit::NANO, "UTC");
    case TypeId::kString:
      return arrow::utf8();
    case TypeId::kUuid:
      return arrow::fixed_size_binary(16);
    case TypeId::kFixed:
      return arrow::fixed_size_binary(type.length);
    case TypeId::kBinary:
      return arrow::binary();
    case TypeId::kStruct: {
      if (type.fields.empty()) {
        return Status::Invalid("an empty struct cannot be written to Parquet (a group needs at least one field)");
      }
      arrow::FieldVector fields;
      for (const auto& f : type.fields) {
        ASSIGN_OR_RAISE(auto field, ArrowFieldOf(f));
        fields.push_back(std::move(field));
      }
      return arrow::struct_(std::move(fields));
    }
    case TypeId::kList: {
      if (type.fields.size() != 1) return Status::Invalid("list type without its element field");
      ASSIGN_OR_RAISE(auto element, ArrowTypeOf(*type.fields[0].type));
      return arrow::list(
          arrow::field("element", std::move(element), !type.fields[0].required, FieldIdMetadata(type.fields[0].id)));
    }
    case TypeId::kMap: {
      if (type.fields.size() != 2) return Status::Invalid("map type without its key and value fields");
      ASSIGN_OR_RAISE(auto key, ArrowTypeOf(*type.fields[0].type));
      ASSIGN_OR_RAISE(auto value, ArrowTypeOf(*type.fields[1].type));
      return std::shared_ptr<arrow::DataType>(std::make_shared<arrow::MapType>(
          arrow::field("key", std::move(key), false, FieldIdMetadata(type.fields[0].id)),
          arrow::field("value", std::move(value), !type.fields[1].required, FieldIdMetadata(type.fields[1].id))));
    }
    default:
      return Status::Unsupported("Iceberg type {} has no Arrow type in Thaw's writer", type.ToString());
  }
}

}  // namespace thaw::parquet

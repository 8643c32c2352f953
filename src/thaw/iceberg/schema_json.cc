#include "thaw/iceberg/schema_json.h"

namespace thaw::iceberg {

using ojson = nlohmann::ordered_json;

namespace {

ojson FieldToJson(const NestedField& f) {
  ojson j = ojson::object();
  j["id"] = f.id;
  j["name"] = f.name;
  j["required"] = f.required;
  j["type"] = f.type ? TypeToJson(*f.type) : ojson("unknown");
  if (!f.doc.empty()) j["doc"] = f.doc;
  if (f.initial_default) {
    ojson d = ojson::parse(*f.initial_default, nullptr, /*allow_exceptions=*/false);
    if (!d.is_discarded()) j["initial-default"] = std::move(d);
  }
  return j;
}

ojson StructToJson(const Type& t) {
  ojson fields = ojson::array();
  for (const auto& f : t.fields) fields.push_back(FieldToJson(f));
  ojson j = ojson::object();
  j["type"] = "struct";
  j["fields"] = std::move(fields);
  return j;
}

}  // namespace

ojson TypeToJson(const Type& t) {
  switch (t.id) {
    case TypeId::kStruct:
      return StructToJson(t);
    case TypeId::kList: {
      const NestedField& e = t.fields.at(0);
      ojson j = ojson::object();
      j["type"] = "list";
      j["element-id"] = e.id;
      j["element"] = TypeToJson(*e.type);
      j["element-required"] = e.required;
      return j;
    }
    case TypeId::kMap: {
      const NestedField& k = t.fields.at(0);
      const NestedField& v = t.fields.at(1);
      ojson j = ojson::object();
      j["type"] = "map";
      j["key-id"] = k.id;
      j["key"] = TypeToJson(*k.type);
      j["value-id"] = v.id;
      j["value"] = TypeToJson(*v.type);
      j["value-required"] = v.required;
      return j;
    }
    default:
      return t.ToString();
  }
}

ojson SchemaToJson(const Schema& schema) {
  ojson j = ojson::object();
  j["type"] = "struct";
  j["schema-id"] = schema.schema_id();
  ojson fields = ojson::array();
  for (const auto& f : schema.fields()) fields.push_back(FieldToJson(f));
  j["fields"] = std::move(fields);
  return j;
}

ojson PartitionFieldsToJson(const PartitionSpec& spec) {
  ojson out = ojson::array();
  for (const auto& f : spec.fields) {
    ojson j = ojson::object();
    j["name"] = f.name;
    j["transform"] = f.transform.text.empty() ? std::string("identity") : f.transform.text;
    if (f.source_ids.size() > 1) {
      j["source-ids"] = f.source_ids;
    } else {
      j["source-id"] = f.source_id();
    }
    j["field-id"] = f.field_id;
    out.push_back(std::move(j));
  }
  return out;
}

Result<TypePtr> PartitionFieldType(const PartitionField& field, const Schema& schema) {
  auto make = [](TypeId id) {
    auto t = std::make_shared<Type>();
    t->id = id;
    return TypePtr(std::move(t));
  };
  switch (field.transform.kind) {
    case TransformKind::kBucket:
    case TransformKind::kYear:
    case TransformKind::kMonth:
    case TransformKind::kHour:
      return make(TypeId::kInt);
    case TransformKind::kDay:
      return make(TypeId::kDate);
    case TransformKind::kIdentity:
    case TransformKind::kTruncate:
    case TransformKind::kVoid: {
      const NestedField* src = schema.FindById(field.source_id());
      if (src == nullptr || !src->type) {
        return Status::Invalid("partition field '{}' (id {}): source column {} is not in schema {}", field.name,
                               field.field_id, field.source_id(), schema.schema_id());
      }
      if (!src->type->is_primitive()) {
        return Status::Invalid("partition field '{}' (id {}): source column {} is a {}, not a primitive", field.name,
                               field.field_id, field.source_id(), src->type->ToString());
      }
      return src->type;
    }
    case TransformKind::kUnknown:
      break;
  }
  return Status::Unsupported(
      "partition field '{}' (id {}): transform '{}' is unknown to Thaw; cannot write manifests "
      "for this partition spec",
      field.name, field.field_id, field.transform.text);
}

}  // namespace thaw::iceberg

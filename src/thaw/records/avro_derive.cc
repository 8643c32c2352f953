#include "thaw/records/avro_derive.h"

#include <nlohmann/json.hpp>
#include <set>

namespace thaw::records {

namespace {

using iceberg::TypeId;
using Json = nlohmann::ordered_json;

bool IsAvroName(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

class Deriver {
 public:
  explicit Deriver(std::string ns) : ns_(std::move(ns)) {}

  Result<Json> Record(const iceberg::Type& t, const std::string& name, const std::string& path) {
    if (!IsAvroName(name) || !names_.insert(name).second) {
      // Two structs of the same field name in different places: a unique name.
      std::string base = IsAvroName(name) ? name : "Record";
      std::string unique = base;
      for (int k = 2; !names_.insert(unique).second; ++k) unique = base + std::to_string(k);
      return RecordNamed(t, unique, path);
    }
    return RecordNamed(t, name, path);
  }

  Result<Json> Field(const iceberg::Type& t, bool required, const std::string& name, const std::string& path) {
    ASSIGN_OR_RAISE(Json type, Type(t, name, path));
    if (required) return type;
    return Json::array({"null", std::move(type)});
  }

 private:
  Result<Json> RecordNamed(const iceberg::Type& t, const std::string& name, const std::string& path) {
    Json rec = {{"type", "record"}, {"name", name}};
    if (!ns_.empty()) rec["namespace"] = ns_;
    Json fields = Json::array();
    for (const auto& f : t.fields) {
      const std::string sub = path.empty() ? f.name : path + "." + f.name;
      if (!IsAvroName(f.name)) {
        return Status::Invalid(
            "column '{}' cannot be an Avro field: '{}' is not an Avro name ([A-Za-z_][A-Za-z0-9_]*)", sub, f.name);
      }
      ASSIGN_OR_RAISE(Json type, Field(*f.type, f.required, Capitalized(f.name), sub));
      Json field = {{"name", f.name}, {"type", std::move(type)}};
      if (!f.required) field["default"] = nullptr;
      fields.push_back(std::move(field));
    }
    if (fields.empty()) return Status::Invalid("column '{}' is a struct without fields: Avro records need one", path);
    rec["fields"] = std::move(fields);
    return rec;
  }

  static std::string Capitalized(std::string s) {
    if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
    return s;
  }

  Result<Json> Type(const iceberg::Type& t, const std::string& name, const std::string& path) {
    auto refuse = [&](const char* why) {
      return Status::Invalid("column '{}' has type {}, which the Avro encoding cannot hold ({})",
                             path.empty() ? "value" : path, t.ToString(), why);
    };
    switch (t.id) {
      case TypeId::kBoolean:
        return Json("boolean");
      case TypeId::kInt:
        return Json("int");
      case TypeId::kLong:
        return Json("long");
      case TypeId::kFloat:
        return Json("float");
      case TypeId::kDouble:
        return Json("double");
      case TypeId::kString:
        return Json("string");
      case TypeId::kBinary:
        return Json("bytes");
      case TypeId::kFixed:
        return Json{{"type", "fixed"}, {"name", Unique(name + "Fixed")}, {"size", t.length}};
      case TypeId::kDecimal:
        return Json{{"type", "bytes"}, {"logicalType", "decimal"}, {"precision", t.precision}, {"scale", t.scale}};
      case TypeId::kDate:
        return Json{{"type", "int"}, {"logicalType", "date"}};
      case TypeId::kTime:
        return Json{{"type", "long"}, {"logicalType", "time-micros"}};
      case TypeId::kTimestampTz:
        return Json{{"type", "long"}, {"logicalType", "timestamp-micros"}};
      case TypeId::kTimestamp:
        return Json{{"type", "long"}, {"logicalType", "local-timestamp-micros"}};
      case TypeId::kStruct:
        return Record(t, name, path);
      case TypeId::kList: {
        const auto& e = t.fields.at(0);
        ASSIGN_OR_RAISE(Json items, Field(*e.type, e.required, name + "Element", path + ".element"));
        return Json{{"type", "array"}, {"items", std::move(items)}};
      }
      case TypeId::kMap: {
        if (t.fields.at(0).type->id != TypeId::kString) return refuse("Avro map keys are strings");
        const auto& v = t.fields.at(1);
        ASSIGN_OR_RAISE(Json values, Field(*v.type, v.required, name + "Value", path + ".value"));
        return Json{{"type", "map"}, {"values", std::move(values)}};
      }
      case TypeId::kUuid:
        return Json{{"type", "string"}, {"logicalType", "uuid"}};
      case TypeId::kTimestampTzNs:
        return Json{{"type", "long"}, {"logicalType", "timestamp-nanos"}};
      case TypeId::kTimestampNs:
        return Json{{"type", "long"}, {"logicalType", "local-timestamp-nanos"}};
      default:
        return refuse("no Avro counterpart");
    }
  }

  std::string Unique(const std::string& base) {
    std::string unique = base;
    for (int k = 2; !names_.insert(unique).second; ++k) unique = base + std::to_string(k);
    return unique;
  }

  std::string ns_;
  std::set<std::string> names_;
};

}  // namespace

Result<std::string> DeriveAvroSchema(const iceberg::Type& value_struct, const std::string& full_name) {
  if (value_struct.id != TypeId::kStruct) return Status::Invalid("the value columns do not form a struct");
  const auto dot = full_name.rfind('.');
  const std::string ns = dot == std::string::npos ? std::string() : full_name.substr(0, dot);
  const std::string name = dot == std::string::npos ? full_name : full_name.substr(dot + 1);
  if (!IsAvroName(name)) return Status::Invalid("'{}' is not an Avro record name", full_name);
  Deriver d(ns);
  ASSIGN_OR_RAISE(Json rec, d.Record(value_struct, name, ""));
  return rec.dump();
}

}  // namespace thaw::records

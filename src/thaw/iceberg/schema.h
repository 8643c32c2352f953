// Iceberg schemas: the type tree with field ids, parsed from table metadata
// JSON (spec Appendix C). Columns are always resolved by field id, never by
// name or position, so renamed, reordered and added columns map correctly.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "thaw/common/status.h"

namespace thaw::iceberg {

enum class TypeId {
  kBoolean, kInt, kLong, kFloat, kDouble, kDecimal, kDate, kTime, kTimestamp, kTimestampTz,
  kTimestampNs, kTimestampTzNs, kString, kUuid, kFixed, kBinary, kUnknown, kVariant,
  kGeometry, kGeography, kStruct, kList, kMap,
};

struct Type;
using TypePtr = std::shared_ptr<const Type>;

struct NestedField {
  int32_t id = 0;
  std::string name;
  bool required = false;
  TypePtr type;
  std::string doc;
  // v3 `initial-default`: the value of this field in data files written
  // before it existed, as the metadata's single-value JSON text (spec
  // Appendix D; structs keyed by field id). Absent: such rows read null.
  std::optional<std::string> initial_default;
};

struct Type {
  TypeId id = TypeId::kUnknown;
  int32_t precision = 0;  // decimal
  int32_t scale = 0;      // decimal
  int32_t length = 0;     // fixed
  std::vector<NestedField> fields;  // struct; list: [element]; map: [key, value]

  bool is_primitive() const { return id != TypeId::kStruct && id != TypeId::kList && id != TypeId::kMap; }
  bool is_nested() const { return !is_primitive(); }
  std::string ToString() const;
};

class Schema {
 public:
  static Result<Schema> FromJson(const nlohmann::json& j);

  int32_t schema_id() const { return schema_id_; }
  const std::vector<NestedField>& fields() const { return root_->fields; }
  const TypePtr& root() const { return root_; }

  // Any field (top-level or nested) by id; nullptr if absent.
  const NestedField* FindById(int32_t id) const;
  // A field by dotted path of names ("kafka.offset"); nullptr if absent.
  const NestedField* FindByPath(std::string_view dotted) const;
  // Dotted name path of a field id ("redpanda.offset"); empty if absent.
  std::string PathOf(int32_t id) const;

 private:
  int32_t schema_id_ = 0;
  TypePtr root_;
  // id -> (field, parent path) index, built once.
  struct Entry { const NestedField* field; std::string path; };
  std::vector<std::pair<int32_t, Entry>> index_;
  void BuildIndex();
};

Result<TypePtr> ParseType(const nlohmann::json& j);

// Iceberg's type promotions (spec, "Schema Evolution"): `from` -> `to` is
// int -> long, float -> double, or decimal(P, S) -> decimal(P', S), P' > P.
bool CanPromote(const Type& from, const Type& to);

// Schema evolution by name (Iceberg Java's unionByNameWith):
// `table` with every field of `other` it lacks (matched by name, in structs
// nested through structs, list elements and map values) appended to its
// struct, optional, with fresh ids from *next_id upward (depth-first).
// Fields present in both keep the table's id and optionality, and its type
// unless `other` widens it as Iceberg allows (int -> long, float -> double,
// decimal(P, S) -> decimal(P', S) with P' > P), as unionByNameWith does.
TypePtr UnionByName(const Type& table, const Type& other, int32_t* next_id);

// The table property holding the default name mapping (spec "Column
// Projection" and "Name Mapping Serialization").
inline constexpr char kNameMappingProperty[] = "schema.name-mapping.default";

// Maps column names of data files written without field ids (e.g. Parquet
// files added with pyiceberg's add_files) to field ids: a JSON list of
// {"field-id": N, "names": [...], "fields": [...]}; "field-id" may be absent
// (the names then map to no field) and "fields" nests for structs, lists
// ("element") and maps ("key", "value").
struct MappedField {
  std::optional<int32_t> field_id;
  std::vector<std::string> names;
  std::vector<MappedField> fields;
};

class NameMapping {
 public:
  // `source` names the mapping in errors (e.g. the table and property).
  static Result<NameMapping> Parse(std::string_view json_text, std::string_view source);
  const std::vector<MappedField>& fields() const { return fields_; }
  // The entry of `level` that lists `name`; nullptr if none does.
  static const MappedField* Find(const std::vector<MappedField>& level, std::string_view name);

 private:
  std::vector<MappedField> fields_;
};

}  // namespace thaw::iceberg

#include "thaw/iceberg/schema.h"

#include <algorithm>
#include <functional>
#include <regex>

#include <nlohmann/json.hpp>

namespace thaw::iceberg {

using json = nlohmann::json;

Result<TypePtr> ParseType(const json& j, int depth);

namespace {

Result<TypePtr> ParsePrimitive(const std::string& s) {
  auto t = std::make_shared<Type>();
  static const std::pair<const char*, TypeId> kSimple[] = {
      {"boolean", TypeId::kBoolean}, {"int", TypeId::kInt}, {"long", TypeId::kLong},
      {"float", TypeId::kFloat}, {"double", TypeId::kDouble}, {"date", TypeId::kDate},
      {"time", TypeId::kTime}, {"timestamp", TypeId::kTimestamp},
      {"timestamptz", TypeId::kTimestampTz}, {"timestamp_ns", TypeId::kTimestampNs},
      {"timestamptz_ns", TypeId::kTimestampTzNs}, {"string", TypeId::kString},
      {"uuid", TypeId::kUuid}, {"binary", TypeId::kBinary}, {"unknown", TypeId::kUnknown},
      {"variant", TypeId::kVariant}, {"geometry", TypeId::kGeometry},
      {"geography", TypeId::kGeography}};
  for (const auto& [name, id] : kSimple) {
    if (s == name) {
      t->id = id;
      return TypePtr(t);
    }
  }
  std::smatch m;
  static const std::regex kDecimal(R"(^decimal\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)$)");
  static const std::regex kFixed(R"(^fixed\s*\[\s*(\d+)\s*\]$)");
  if (std::regex_match(s, m, kDecimal)) {
    t->id = TypeId::kDecimal;
    t->precision = std::stoi(m[1]);
    t->scale = std::stoi(m[2]);
    return TypePtr(t);
  }
  if (std::regex_match(s, m, kFixed)) {
    t->id = TypeId::kFixed;
    t->length = std::stoi(m[1]);
    return TypePtr(t);
  }
  // geometry(crs) / geography(crs, algo) carry parameters Thaw does not use.
  if (s.rfind("geometry", 0) == 0) { t->id = TypeId::kGeometry; return TypePtr(t); }
  if (s.rfind("geography", 0) == 0) { t->id = TypeId::kGeography; return TypePtr(t); }
  return Status::Unsupported("unknown Iceberg type '{}'", s);
}

Result<NestedField> ParseField(const json& f, int depth) {
  if (!f.is_object() || !f.contains("id") || !f.contains("name") || !f.contains("type")) {
    return Status::Corrupt("schema field needs id, name and type: {}", f.dump().substr(0, 200));
  }
  NestedField nf;
  nf.id = f["id"].get<int32_t>();
  nf.name = f["name"].get<std::string>();
  nf.required = f.value("required", false);
  if (f.contains("doc") && f["doc"].is_string()) nf.doc = f["doc"].get<std::string>();
  if (auto d = f.find("initial-default"); d != f.end() && !d->is_null()) nf.initial_default = d->dump();
  auto t = ParseType(f["type"], depth + 1);
  if (!t.ok()) return t.status().WithContext(fmt::format("field '{}' (id {})", nf.name, nf.id));
  nf.type = std::move(*t);
  return nf;
}

}  // namespace

Result<TypePtr> ParseType(const json& j) { return ParseType(j, 0); }

Result<TypePtr> ParseType(const json& j, int depth) {
  // Untrusted metadata: bound nesting so a crafted file cannot exhaust the stack.
  if (depth > 64) return Status::Corrupt("schema nests types deeper than 64 levels");
  try {
    if (j.is_string()) return ParsePrimitive(j.get<std::string>());
    if (!j.is_object() || !j.contains("type")) return Status::Corrupt("bad type: {}", j.dump().substr(0, 200));
    const std::string kind = j["type"].get<std::string>();
    auto t = std::make_shared<Type>();
    if (kind == "struct") {
      t->id = TypeId::kStruct;
      for (const auto& f : j.at("fields")) {
        ASSIGN_OR_RAISE(auto nf, ParseField(f, depth));
        t->fields.push_back(std::move(nf));
      }
    } else if (kind == "list") {
      t->id = TypeId::kList;
      NestedField e;
      e.id = j.at("element-id").get<int32_t>();
      e.name = "element";
      e.required = j.value("element-required", false);
      ASSIGN_OR_RAISE(e.type, ParseType(j.at("element"), depth + 1));
      t->fields.push_back(std::move(e));
    } else if (kind == "map") {
      t->id = TypeId::kMap;
      NestedField k, v;
      k.id = j.at("key-id").get<int32_t>();
      k.name = "key";
      k.required = true;
      ASSIGN_OR_RAISE(k.type, ParseType(j.at("key"), depth + 1));
      v.id = j.at("value-id").get<int32_t>();
      v.name = "value";
      v.required = j.value("value-required", false);
      ASSIGN_OR_RAISE(v.type, ParseType(j.at("value"), depth + 1));
      t->fields.push_back(std::move(k));
      t->fields.push_back(std::move(v));
    } else {
      return Status::Unsupported("unknown nested type '{}'", kind);
    }
    return TypePtr(t);
  } catch (const json::exception& e) {
    return Status::Corrupt("bad type JSON: {}", e.what());
  }
}

std::string Type::ToString() const {
  switch (id) {
    case TypeId::kBoolean: return "boolean";
    case TypeId::kInt: return "int";
    case TypeId::kLong: return "long";
    case TypeId::kFloat: return "float";
    case TypeId::kDouble: return "double";
    case TypeId::kDecimal: return fmt::format("decimal({},{})", precision, scale);
    case TypeId::kDate: return "date";
    case TypeId::kTime: return "time";
    case TypeId::kTimestamp: return "timestamp";
    case TypeId::kTimestampTz: return "timestamptz";
    case TypeId::kTimestampNs: return "timestamp_ns";
    case TypeId::kTimestampTzNs: return "timestamptz_ns";
    case TypeId::kString: return "string";
    case TypeId::kUuid: return "uuid";
    case TypeId::kFixed: return fmt::format("fixed[{}]", length);
    case TypeId::kBinary: return "binary";
    case TypeId::kUnknown: return "unknown";
    case TypeId::kVariant: return "variant";
    case TypeId::kGeometry: return "geometry";
    case TypeId::kGeography: return "geography";
    case TypeId::kStruct: {
      std::string s = "struct<";
      for (size_t i = 0; i < fields.size(); ++i) {
        if (i) s += ", ";
        s += fields[i].name + ": " + fields[i].type->ToString();
      }
      return s + ">";
    }
    case TypeId::kList: return "list<" + fields[0].type->ToString() + ">";
    case TypeId::kMap: return "map<" + fields[0].type->ToString() + ", " + fields[1].type->ToString() + ">";
  }
  return "?";
}

Result<Schema> Schema::FromJson(const json& j) {
  Schema s;
  try {
    s.schema_id_ = j.value("schema-id", 0);
  } catch (const json::exception& e) {
    return Status::Corrupt("bad schema-id: {}", e.what());
  }
  ASSIGN_OR_RAISE(s.root_, ParseType(j));
  if (s.root_->id != TypeId::kStruct) return Status::Corrupt("schema is not a struct");
  s.BuildIndex();
  return s;
}

void Schema::BuildIndex() {
  index_.clear();
  std::function<void(const Type&, const std::string&)> walk = [&](const Type& t, const std::string& prefix) {
    for (const auto& f : t.fields) {
      std::string path = prefix.empty() ? f.name : prefix + "." + f.name;
      index_.push_back({f.id, Entry{&f, path}});
      if (f.type && f.type->is_nested()) walk(*f.type, path);
    }
  };
  walk(*root_, "");
  std::sort(index_.begin(), index_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
}

const NestedField* Schema::FindById(int32_t id) const {
  auto it = std::lower_bound(index_.begin(), index_.end(), id,
                             [](const auto& e, int32_t v) { return e.first < v; });
  return (it != index_.end() && it->first == id) ? it->second.field : nullptr;
}

std::string Schema::PathOf(int32_t id) const {
  auto it = std::lower_bound(index_.begin(), index_.end(), id,
                             [](const auto& e, int32_t v) { return e.first < v; });
  return (it != index_.end() && it->first == id) ? it->second.path : std::string();
}

const NestedField* Schema::FindByPath(std::string_view dotted) const {
  for (const auto& [id, e] : index_) {
    if (e.path == dotted) return e.field;
  }
  return nullptr;
}

namespace {

Status ParseMappedFields(const json& j, std::string_view source, int depth, std::vector<MappedField>* out) {
  if (!j.is_array()) return Status::Corrupt("name mapping {}: expected a JSON list of fields", source);
  if (depth > 64) return Status::Corrupt("name mapping {}: nested more than 64 levels deep", source);
  for (const auto& f : j) {
    if (!f.is_object()) return Status::Corrupt("name mapping {}: a field is not a JSON object: {}", source, f.dump());
    MappedField m;
    if (auto it = f.find("field-id"); it != f.end() && !it->is_null()) {
      if (!it->is_number_integer()) {
        return Status::Corrupt("name mapping {}: field-id is not an integer: {}", source, f.dump());
      }
      m.field_id = it->get<int32_t>();
    }
    auto names = f.find("names");
    if (names == f.end() || !names->is_array()) {
      return Status::Corrupt("name mapping {}: a field has no \"names\" list: {}", source, f.dump());
    }
    for (const auto& n : *names) {
      if (!n.is_string()) return Status::Corrupt("name mapping {}: a name is not a string: {}", source, f.dump());
      m.names.push_back(n.get<std::string>());
    }
    if (auto it = f.find("fields"); it != f.end() && !it->is_null()) {
      RETURN_NOT_OK(ParseMappedFields(*it, source, depth + 1, &m.fields));
    }
    out->push_back(std::move(m));
  }
  return Status::OK();
}

}  // namespace

Result<NameMapping> NameMapping::Parse(std::string_view json_text, std::string_view source) {
  json j = json::parse(json_text, nullptr, false);
  if (j.is_discarded()) return Status::Corrupt("name mapping {}: not valid JSON", source);
  NameMapping m;
  RETURN_NOT_OK(ParseMappedFields(j, source, 0, &m.fields_));
  return m;
}

const MappedField* NameMapping::Find(const std::vector<MappedField>& level, std::string_view name) {
  for (const auto& f : level) {
    for (const auto& n : f.names) {
      if (n == name) return &f;
    }
  }
  return nullptr;
}

namespace {

// A copy of `t` with fresh field ids, depth-first from *next_id.
TypePtr Renumber(const Type& t, int32_t* next_id) {
  auto c = std::make_shared<Type>(t);
  for (auto& f : c->fields) {
    f.id = (*next_id)++;
    f.type = Renumber(*f.type, next_id);
  }
  return c;
}

}  // namespace

bool CanPromote(const Type& from, const Type& to) {
  return (from.id == TypeId::kInt && to.id == TypeId::kLong) ||
         (from.id == TypeId::kFloat && to.id == TypeId::kDouble) ||
         (from.id == TypeId::kDecimal && to.id == TypeId::kDecimal && to.scale == from.scale &&
          to.precision > from.precision);
}

TypePtr UnionByName(const Type& t, const Type& w, int32_t* next_id) {
  // A promotion: the other's type (the field keeps its id).
  if (CanPromote(t, w)) {
    auto c = std::make_shared<Type>(t);
    c->id = w.id;
    c->precision = w.precision;
    return c;
  }
  if (t.id != w.id || t.is_primitive()) return std::make_shared<Type>(t);
  auto c = std::make_shared<Type>(t);
  if (t.id == TypeId::kStruct) {
    for (const auto& wf : w.fields) {
      auto it = std::find_if(c->fields.begin(), c->fields.end(), [&](const NestedField& f) { return f.name == wf.name; });
      if (it != c->fields.end()) {
        it->type = UnionByName(*it->type, *wf.type, next_id);
        continue;
      }
      NestedField added = wf;
      added.id = (*next_id)++;
      added.required = false;  // Iceberg adds optional fields
      added.initial_default.reset();
      added.type = Renumber(*wf.type, next_id);
      c->fields.push_back(std::move(added));
    }
    return c;
  }
  const size_t k = t.id == TypeId::kList ? 0 : 1;
  if (c->fields.size() > k && w.fields.size() > k) {
    c->fields[k].type = UnionByName(*t.fields[k].type, *w.fields[k].type, next_id);
  }
  return c;
}

}  // namespace thaw::iceberg

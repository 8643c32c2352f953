#include "thaw/records/json_schema_value.h"

#include <arrow/array.h>
#include <arrow/builder.h>
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "thaw/records/json_value.h"
#include "thaw/records/struct_fields.h"
#include "thaw/registry/wire.h"

namespace thaw::records {

namespace {

using Json = nlohmann::ordered_json;
using iceberg::NestedField;
using iceberg::Type;
using iceberg::TypeId;
using iceberg::TypePtr;
using Node = JsonSchemaValue::Node;

constexpr int kMaxDepth = 32;
// Nodes a schema may map to: $refs can make a small document expand
// exponentially (each definition naming the next several times).
constexpr int kMaxNodes = 10000;

std::string Where(const std::string& where) { return where.empty() ? "the schema's root" : "'" + where + "'"; }

// The documents a schema's references give, by the name its $refs use.
using Documents = std::map<std::string, Json>;

// The schema `s` (at `where`) as a Node; `root` resolves local $refs,
// `docs` those to other documents ("customer.json", "customer.json#/$defs/X");
// *budget counts the nodes left.
Result<Node> Map(const Json& s, const Json& root, const Documents& docs, const std::string& where, int depth,
                 int* budget) {
  if (depth > kMaxDepth) return Status::Unsupported("{} nests deeper than {} levels", Where(where), kMaxDepth);
  if (--*budget < 0) return Status::Unsupported("the schema maps to more than {} fields", kMaxNodes);
  if (s.is_boolean()) return Status::Unsupported("{} is the schema `{}`, which gives no type", Where(where), s.dump());
  if (!s.is_object()) return Status::Invalid("{} is not a JSON Schema object", Where(where));
  if (auto ref = s.find("$ref"); ref != s.end()) {
    if (!ref->is_string()) return Status::Invalid("{}: $ref is not a string", Where(where));
    const std::string& r = ref->get_ref<const std::string&>();
    const size_t hash = r.find('#');
    const std::string doc_name = r.substr(0, hash);
    const std::string fragment = hash == std::string::npos ? "" : r.substr(hash);
    const Json* base = &root;
    if (!doc_name.empty()) {
      auto d = docs.find(doc_name);
      if (d == docs.end()) {
        return Status::Unsupported("{}: $ref '{}' points to a document the schema's references do not give",
                                   Where(where), r);
      }
      base = &d->second;
      if (fragment.empty() || fragment == "#") return Map(*base, *base, docs, where, depth + 1, budget);
    }
    for (const char* prefix : {"#/definitions/", "#/$defs/"}) {
      const std::string p = prefix;
      if (fragment.rfind(p, 0) != 0) continue;
      const Json& defs = base->value(p.substr(2, p.size() - 3), Json::object());
      auto it = defs.find(fragment.substr(p.size()));
      if (it == defs.end()) return Status::Invalid("{}: $ref '{}' names no definition", Where(where), r);
      return Map(*it, *base, docs, where, depth + 1, budget);
    }
    return Status::Unsupported("{}: $ref '{}' is neither a definition nor a referenced document", Where(where), r);
  }
  for (const char* combinator : {"oneOf", "anyOf"}) {
    auto it = s.find(combinator);
    if (it == s.end()) continue;
    if (!it->is_array()) return Status::Invalid("{}: {} is not a list", Where(where), combinator);
    std::vector<const Json*> kept;
    for (const auto& alt : *it) {
      if (alt.is_object() && alt.value("type", Json()) == "null") continue;
      kept.push_back(&alt);
    }
    if (kept.size() != 1) {
      return Status::Unsupported("{}: {} of {} types other than null (a union Iceberg has no column type for)",
                                 Where(where), combinator, kept.size());
    }
    return Map(*kept[0], root, docs, where, depth + 1, budget);
  }
  std::string type;
  if (auto t = s.find("type"); t != s.end()) {
    if (t->is_string()) {
      type = t->get<std::string>();
    } else if (t->is_array()) {
      for (const auto& e : *t) {
        if (!e.is_string()) return Status::Invalid("{}: type list holds {}", Where(where), e.dump());
        if (e == "null") continue;
        if (!type.empty()) {
          return Status::Unsupported("{} has types {} (a union Iceberg has no column type for)", Where(where),
                                     t->dump());
        }
        type = e.get<std::string>();
      }
    }
  } else if (s.contains("properties")) {
    type = "object";
  }
  Node n;
  if (type == "string") {
    n.kind = TypeId::kString;
  } else if (type == "integer") {
    n.kind = TypeId::kLong;
  } else if (type == "number") {
    n.kind = TypeId::kDouble;
  } else if (type == "boolean") {
    n.kind = TypeId::kBoolean;
  } else if (type == "array") {
    auto items = s.find("items");
    if (items == s.end()) return Status::Unsupported("{} is an array without `items`", Where(where));
    n.kind = TypeId::kList;
    ASSIGN_OR_RAISE(Node e, Map(*items, root, docs, where + "[]", depth + 1, budget));
    n.element.push_back(std::move(e));
  } else if (type == "object") {
    auto props = s.find("properties");
    if (props == s.end() || !props->is_object() || props->empty()) {
      return Status::Unsupported("{} is an object without properties (a map Iceberg's struct cannot hold)",
                                 Where(where));
    }
    n.kind = TypeId::kStruct;
    for (const auto& [name, sub] : props->items()) {
      // Iceberg engines address nested fields by dotted names: "a.b" beside
      // a.b would make the table unreadable to them.
      if (name.empty() || name.find('.') != std::string::npos) {
        return Status::Unsupported("{} has a property named '{}': Iceberg column names are not empty and hold no '.'",
                                   Where(where), name);
      }
      ASSIGN_OR_RAISE(Node f, Map(sub, root, docs, where.empty() ? name : where + "." + name, depth + 1, budget));
      f.name = name;
      n.fields.push_back(std::move(f));
    }
  } else {
    return Status::Unsupported("{} has {}: Thaw maps string, integer, number, boolean, array and object",
                               Where(where), type.empty() ? std::string("no type") : "type " + type);
  }
  return n;
}

Result<Node> Parse(std::string_view text, const SchemaReferences& references) {
  Json doc = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Status::Invalid("the JSON Schema is not JSON");
  Documents docs;
  for (const auto& r : references) {
    Json d = Json::parse(r.text, nullptr, /*allow_exceptions=*/false);
    if (d.is_discarded()) return Status::Invalid("the referenced JSON Schema '{}' is not JSON", r.name);
    docs.emplace(r.name, std::move(d));
  }
  int budget = kMaxNodes;
  ASSIGN_OR_RAISE(Node root, Map(doc, doc, docs, "", 0, &budget));
  if (root.kind != TypeId::kStruct) return Status::Unsupported("the schema's root is not an object with properties");
  return root;
}

TypePtr ToType(const Node& n, int32_t* next_id) {
  auto t = std::make_shared<Type>();
  t->id = n.kind;
  if (n.kind == TypeId::kStruct) {
    for (const Node& child : n.fields) {
      NestedField f;
      f.id = (*next_id)++;
      f.name = child.name;
      f.type = ToType(child, next_id);
      t->fields.push_back(std::move(f));
    }
  } else if (n.kind == TypeId::kList) {
    NestedField e;
    e.id = (*next_id)++;
    e.name = "element";
    e.type = ToType(n.element[0], next_id);
    t->fields.push_back(std::move(e));
  }
  return t;
}

const char* KindName(TypeId k) {
  switch (k) {
    case TypeId::kString: return "string";
    case TypeId::kLong: return "integer (long)";
    case TypeId::kDouble: return "number (double)";
    case TypeId::kBoolean: return "boolean";
    case TypeId::kList: return "array (list)";
    case TypeId::kStruct: return "object (struct)";
    default: return "another type";
  }
}

// Resolve (grow == nullptr) or Evolve: `n` against table type `t`.
Result<TypePtr> Match(const Node& n, const TypePtr& t, const std::string& where, int32_t* grow) {
  if (t->id != n.kind) {
    return Status::Invalid("value field {} is {} in the table but {} in the schema", Where(where), t->ToString(),
                           KindName(n.kind));
  }
  if (n.kind == TypeId::kList) {
    ASSIGN_OR_RAISE(TypePtr e, Match(n.element[0], t->fields[0].type, where + "[]", grow));
    if (e == t->fields[0].type) return t;
    auto out = std::make_shared<Type>(*t);
    out->fields[0].type = e;
    return TypePtr(out);
  }
  if (n.kind != TypeId::kStruct) return t;
  std::shared_ptr<Type> out;
  auto copy = [&]() -> Type& {
    if (!out) out = std::make_shared<Type>(*t);
    return *out;
  };
  for (const Node& child : n.fields) {
    const std::string& name = child.name;
    const std::string at = where.empty() ? name : where + "." + name;
    size_t k = 0;
    while (k < t->fields.size() && t->fields[k].name != name) ++k;
    if (k == t->fields.size()) {
      if (!grow) return Status::NotFound("the schema has field '{}', which the table lacks", at);
      NestedField f;
      f.id = (*grow)++;
      f.name = name;
      f.type = ToType(child, grow);
      copy().fields.push_back(std::move(f));
      continue;
    }
    ASSIGN_OR_RAISE(TypePtr sub, Match(child, t->fields[k].type, at, grow));
    if (sub != t->fields[k].type) copy().fields[k].type = sub;
  }
  return out ? TypePtr(out) : t;
}

Status CheckRequired(const TypePtr& t, const std::string& where) {
  for (const auto& f : t->fields) {
    const std::string at = where.empty() ? f.name : where + "." + f.name;
    if (f.required) {
      return Status::Invalid("value field '{}' is required in the table: JSON values may omit it", at);
    }
    if (f.type && f.type->is_nested()) RETURN_NOT_OK(CheckRequired(f.type, at));
  }
  return Status::OK();
}

// Writes `a[i]` as the node's JSON. Invalid when the array does not have
// the node's shape (a column the schema names is missing): the caller must
// not present other bytes as the value.
template <typename ListArray>
Status WriteList(const Node& n, const ListArray& l, int64_t i, std::string* out, StructFields& fields);

Status Write(const Node& n, const arrow::Array& a, int64_t i, std::string* out, StructFields& fields) {
  if (a.IsNull(i)) {
    *out += "null";
    return Status::OK();
  }
  if (n.kind == TypeId::kStruct) {
    if (a.type_id() != arrow::Type::STRUCT) return Status::Invalid("a struct is stored as {}", a.type()->ToString());
    const auto& s = static_cast<const arrow::StructArray&>(a);
    *out += '{';
    bool first = true;
    const auto& cols = fields.IndexesByName(&n, static_cast<const arrow::StructType&>(*s.type()), n.fields,
                                            [](const Node& c) -> const std::string& { return c.name; });
    for (size_t k = 0; k < n.fields.size(); ++k) {
      const Node& child = n.fields[k];
      if (cols[k] < 0) return Status::Invalid("the value struct has no field '{}' of the writer schema", child.name);
      if (!first) *out += ',';
      first = false;
      AppendJsonString(child.name, out);
      *out += ':';
      RETURN_NOT_OK(Write(child, fields.Field(s, cols[k]), i, out, fields));  // offset as the struct's
    }
    *out += '}';
    return Status::OK();
  }
  if (n.kind == TypeId::kList) {
    // pyiceberg and pyarrow write large lists.
    if (a.type_id() == arrow::Type::LIST) return WriteList(n, static_cast<const arrow::ListArray&>(a), i, out, fields);
    if (a.type_id() == arrow::Type::LARGE_LIST) {
      return WriteList(n, static_cast<const arrow::LargeListArray&>(a), i, out, fields);
    }
    return Status::Invalid("a list is stored as {}", a.type()->ToString());
  }
  AppendJsonValue(a, i, out, &fields);
  return Status::OK();
}

template <typename ListArray>
Status WriteList(const Node& n, const ListArray& l, int64_t i, std::string* out, StructFields& fields) {
  const auto& values = *l.values();
  *out += '[';
  for (int64_t k = l.value_offset(i); k < l.value_offset(i) + l.value_length(i); ++k) {
    if (k != l.value_offset(i)) *out += ',';
    RETURN_NOT_OK(Write(n.element[0], values, k, out, fields));
  }
  *out += ']';
  return Status::OK();
}

Json SchemaOf(const Type& t) {
  switch (t.id) {
    case TypeId::kBoolean: return Json{{"type", "boolean"}};
    case TypeId::kInt:
    case TypeId::kLong: return Json{{"type", "integer"}};
    case TypeId::kFloat:
    case TypeId::kDouble: return Json{{"type", "number"}};
    case TypeId::kStruct: {
      Json props = Json::object();
      for (const auto& f : t.fields) {
        if (f.name.rfind("__", 0) == 0) continue;  // writers' internals, left out of the JSON too
        Json s = SchemaOf(*f.type);
        props[f.name] = f.required ? s : Json{{"oneOf", Json::array({Json{{"type", "null"}}, s})}};
      }
      return Json{{"type", "object"}, {"properties", props}};
    }
    case TypeId::kList: {
      const auto& e = t.fields.at(0);
      Json s = SchemaOf(*e.type);
      return Json{{"type", "array"}, {"items", e.required ? s : Json{{"oneOf", Json::array({Json{{"type", "null"}}, s})}}}};
    }
    case TypeId::kMap: {
      const auto& v = t.fields.at(1);
      Json vs = SchemaOf(*v.type);
      if (!v.required) vs = Json{{"oneOf", Json::array({Json{{"type", "null"}}, vs})}};
      if (t.fields.at(0).type->id == TypeId::kString) return Json{{"type", "object"}, {"additionalProperties", vs}};
      return Json{{"type", "array"},
                  {"items", Json{{"type", "object"},
                                 {"properties", Json{{"key", SchemaOf(*t.fields.at(0).type)}, {"value", vs}}}}}};
    }
    default: return Json{{"type", "string"}};
  }
}

}  // namespace

Result<std::string> DeriveJsonSchema(const iceberg::Type& value_struct, const std::string& title) {
  if (value_struct.id != TypeId::kStruct) return Status::Invalid("the value is not a struct: {}", value_struct.ToString());
  Json s = Json{{"$schema", "http://json-schema.org/draft-07/schema#"}, {"title", title}};
  const Json body = SchemaOf(value_struct);
  for (const auto& [k, v] : body.items()) s[k] = v;
  return s.dump();
}

JsonSchemaValue::JsonSchemaValue(std::string text, Node root, iceberg::TypePtr type)
    : text_(std::move(text)), root_(std::move(root)), type_(std::move(type)) {}

Result<std::shared_ptr<const JsonSchemaValue>> JsonSchemaValue::Make(std::string_view schema_text,
                                                                     int32_t first_field_id,
                                                                     const SchemaReferences& references) {
  ASSIGN_OR_RAISE(Node root, Parse(schema_text, references));
  int32_t next = first_field_id;
  TypePtr type = ToType(root, &next);
  return std::make_shared<const JsonSchemaValue>(std::string(schema_text), std::move(root), std::move(type));
}

Result<std::shared_ptr<const JsonSchemaValue>> JsonSchemaValue::Resolve(std::string_view schema_text,
                                                                        const iceberg::TypePtr& table_type,
                                                                        const SchemaReferences& references) {
  ASSIGN_OR_RAISE(Node root, Parse(schema_text, references));
  RETURN_NOT_OK(CheckRequired(table_type, ""));
  RETURN_NOT_OK(Match(root, table_type, "", nullptr).status());
  return std::make_shared<const JsonSchemaValue>(std::string(schema_text), std::move(root), table_type);
}

Result<iceberg::TypePtr> JsonSchemaValue::Evolve(const iceberg::TypePtr& table_type, std::string_view schema_text,
                                                 int32_t* next_id, const SchemaReferences& references) {
  ASSIGN_OR_RAISE(Node root, Parse(schema_text, references));
  return Match(root, table_type, "", next_id);
}

Status JsonSchemaValue::DecodeFramed(std::string_view value, arrow::StructBuilder* builder) const {
  ASSIGN_OR_RAISE(auto framing, registry::ParseFraming(value, /*protobuf=*/false));
  bool appended = false;
  RETURN_NOT_OK(AppendJsonObject(*type_, value.substr(framing.body_offset), builder, &appended));
  if (!appended) return Status::Corrupt("the framed value's body is not a JSON object");
  return Status::OK();
}

Status JsonSchemaValue::EncodeFramed(const arrow::StructArray& values, int64_t row, int32_t schema_id,
                                     std::string* out, StructFields* fields) const {
  std::string body;
  StructFields once;
  RETURN_NOT_OK(Write(root_, values, row, &body, fields ? *fields : once));
  *out += registry::Frame(schema_id, {}, /*protobuf=*/false, body);
  return Status::OK();
}

}  // namespace thaw::records

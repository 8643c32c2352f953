#include "thaw/records/protobuf_derive.h"

#include <map>
#include <set>

#include <fmt/format.h>

namespace thaw::records {

namespace {

using iceberg::TypeId;

bool IsIdentifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

std::string Sub(const std::string& path, const std::string& name) { return path.empty() ? name : path + "." + name; }

// One message's text: its nested messages first, then its fields.
class Deriver {
 public:
  Status Message(const iceberg::Type& t, const std::string& name, const std::string& path, int depth,
                 std::string* out) {
    if (t.fields.empty()) {
      return Status::Invalid("column '{}' is a struct without fields: Protobuf messages need one",
                             path.empty() ? "value" : path);
    }
    const std::string pad(static_cast<size_t>(depth) * 2, ' ');
    std::set<std::string> taken;
    for (const auto& f : t.fields) taken.insert(f.name);
    // proto3 refuses two fields whose names agree once lower-cased without
    // underscores (their JSON names would clash): name both columns.
    std::map<std::string, std::string> folded;
    for (const auto& f : t.fields) {
      std::string key;
      for (char c : f.name) {
        if (c != '_') key.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
      }
      auto [it, fresh] = folded.emplace(key, f.name);
      if (!fresh) {
        return Status::Invalid("columns '{}' and '{}' cannot both be fields of a Protobuf message: proto3 takes "
                               "names that differ only in case or underscores as the same",
                               Sub(path, it->second), Sub(path, f.name));
      }
    }
    std::string nested, fields;
    int number = 1;
    for (const auto& f : t.fields) {
      const std::string sub = Sub(path, f.name);
      if (!IsIdentifier(f.name)) {
        return Status::Invalid(
            "column '{}' cannot be a Protobuf field: '{}' is not an identifier ([A-Za-z_][A-Za-z0-9_]*)", sub,
            f.name);
      }
      std::string decl;
      switch (f.type->id) {
        case TypeId::kStruct: {
          ASSIGN_OR_RAISE(std::string type, Nested(*f.type, f.name, sub, depth + 1, &taken, &nested));
          decl = fmt::format("{} {}", type, f.name);
          break;
        }
        case TypeId::kList: {
          const auto& e = f.type->fields.at(0);
          if (e.type->id == TypeId::kList || e.type->id == TypeId::kMap) {
            return Status::Invalid("column '{}' is {}: Protobuf has no repeated field of lists or maps", sub,
                                   f.type->ToString());
          }
          ASSIGN_OR_RAISE(std::string type, Element(*e.type, f.name, sub + ".element", depth + 1, &taken, &nested));
          decl = fmt::format("repeated {} {}", type, f.name);
          break;
        }
        case TypeId::kMap: {
          const auto& k = f.type->fields.at(0);
          const auto& v = f.type->fields.at(1);
          if (k.type->id != TypeId::kString && k.type->id != TypeId::kInt && k.type->id != TypeId::kLong &&
              k.type->id != TypeId::kBoolean) {
            return Status::Invalid("column '{}' is {}: Protobuf map keys are strings, integers or booleans", sub,
                                   f.type->ToString());
          }
          if (v.type->id == TypeId::kList || v.type->id == TypeId::kMap) {
            return Status::Invalid("column '{}' is {}: Protobuf map values cannot be lists or maps", sub,
                                   f.type->ToString());
          }
          ASSIGN_OR_RAISE(std::string key, Scalar(*k.type, sub + ".key"));
          ASSIGN_OR_RAISE(std::string value,
                          Element(*v.type, f.name + "_value", sub + ".value", depth + 1, &taken, &nested));
          decl = fmt::format("map<{}, {}> {}", key, value, f.name);
          break;
        }
        default: {
          ASSIGN_OR_RAISE(std::string type, Scalar(*f.type, sub));
          decl = fmt::format("optional {} {}", type, f.name);
        }
      }
      fields += fmt::format("{}  {} = {};\n", pad, decl, number++);
    }
    *out += fmt::format("{}message {} {{\n{}{}{}}}\n", pad, name, nested, fields, pad);
    return Status::OK();
  }

 private:
  // A list element or map value: a scalar, or a message declared in `nested`.
  Result<std::string> Element(const iceberg::Type& t, const std::string& field, const std::string& path, int depth,
                              std::set<std::string>* taken, std::string* nested) {
    if (t.id == TypeId::kStruct) return Nested(t, field, path, depth, taken, nested);
    return Scalar(t, path);
  }

  // A message for struct `t` of field `field`, named after it (unique among
  // the parent's fields and nested messages), declared in `nested`.
  Result<std::string> Nested(const iceberg::Type& t, const std::string& field, const std::string& path, int depth,
                             std::set<std::string>* taken, std::string* nested) {
    std::string base;
    bool upper = true;
    for (char c : field) {
      if (c == '_') {
        upper = true;
        continue;
      }
      base.push_back(upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c);
      upper = false;
    }
    if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0]))) base = "M" + base;
    std::string name = base;
    for (int k = 2; !taken->insert(name).second; ++k) name = base + std::to_string(k);
    RETURN_NOT_OK(Message(t, name, path, depth, nested));
    return name;
  }

  static Result<std::string> Scalar(const iceberg::Type& t, const std::string& path) {
    switch (t.id) {
      case TypeId::kBoolean: return std::string("bool");
      case TypeId::kInt: return std::string("int32");
      case TypeId::kLong: return std::string("int64");
      case TypeId::kFloat: return std::string("float");
      case TypeId::kDouble: return std::string("double");
      case TypeId::kString: return std::string("string");
      case TypeId::kBinary: return std::string("bytes");
      default:
        return Status::Invalid(
            "column '{}' is {}: Protobuf has no such type (--value-format avro encodes it as an Avro logical type)",
            path, t.ToString());
    }
  }
};

}  // namespace

Result<std::string> DeriveProtobufSchema(const iceberg::Type& value_struct, const std::string& full_name) {
  if (value_struct.id != TypeId::kStruct) return Status::Invalid("the value columns do not form a struct");
  std::string package, name = full_name;
  if (auto dot = full_name.rfind('.'); dot != std::string::npos) {
    package = full_name.substr(0, dot);
    name = full_name.substr(dot + 1);
  }
  if (!IsIdentifier(name)) return Status::Invalid("'{}' is not a Protobuf message name", name);
  std::string text = "syntax = \"proto3\";\n";
  if (!package.empty()) text += fmt::format("package {};\n", package);
  text += "\n";
  Deriver d;
  RETURN_NOT_OK(d.Message(value_struct, name, "", 0, &text));
  return text;
}

}  // namespace thaw::records

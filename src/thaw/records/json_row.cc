#include "thaw/records/json_row.h"

#include <charconv>
#include <cmath>

#include <arrow/array.h>
#include <limits>
#include <arrow/builder.h>
#include <arrow/extension_type.h>
#include <arrow/record_batch.h>
#include <arrow/scalar.h>
#include <arrow/type.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "thaw/common/civil_time.h"
#include "thaw/parquet/arrow_status.h"
#include "thaw/parquet/parquet_file.h"
#include "thaw/records/arrow_access.h"
#include "thaw/records/layout.h"

namespace thaw::records {
namespace {

using iceberg::TypeId;

// "12.3", "-0.05", "2E+20" -> exactly `scale` fraction digits ("12.30").
Result<std::string> RescaleDecimal(const std::string& text, int32_t scale) {
  std::string digits;
  int64_t exp = 0;
  bool neg = false, seen_digit = false;
  size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) neg = text[i++] == '-';
  int64_t frac = 0;
  bool in_frac = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c >= '0' && c <= '9') {
      digits.push_back(c);
      seen_digit = true;
      if (in_frac) ++frac;
    } else if (c == '.' && !in_frac) {
      in_frac = true;
    } else if ((c == 'e' || c == 'E') && seen_digit) {
      const char* begin = text.data() + i + 1 + (text[i + 1] == '+' ? 1 : 0);
      auto [p, ec] = std::from_chars(begin, text.data() + text.size(), exp);
      if (ec != std::errc() || p != text.data() + text.size()) return Status::Invalid("'{}' is not a decimal", text);
      i = text.size();
      break;
    } else {
      return Status::Invalid("'{}' is not a decimal", text);
    }
  }
  if (!seen_digit || exp > 1000 || exp < -1000) return Status::Invalid("'{}' is not a decimal", text);
  // value = digits * 10^(exp - frac); want unscaled digits at `scale`.
  int64_t shift = scale + exp - frac;
  if (shift >= 0) {
    digits.append(static_cast<size_t>(shift), '0');
  } else {
    size_t cut = static_cast<size_t>(-shift);
    if (cut > digits.size()) digits.insert(0, cut - digits.size(), '0');
    if (digits.find_first_not_of('0', digits.size() - cut) != std::string::npos) {
      return Status::Invalid("'{}' has more than {} fraction digits", text, scale);
    }
    digits.resize(digits.size() - cut);
  }
  if (digits.size() <= static_cast<size_t>(scale)) {
    digits.insert(0, static_cast<size_t>(scale) + 1 - digits.size(), '0');
  }
  size_t nz = digits.find_first_not_of('0');
  size_t int_len = digits.size() - static_cast<size_t>(scale);
  nz = std::min(nz == std::string::npos ? digits.size() : nz, int_len - 1);
  digits.erase(0, nz);
  int_len -= nz;
  std::string out = (neg && digits.find_first_not_of('0') != std::string::npos) ? "-" : "";
  out += digits.substr(0, int_len);
  if (scale > 0) out += "." + digits.substr(int_len);
  return out;
}

Result<std::string> HexToBytes(const std::string& hex) {
  if (hex.size() % 2) return Status::Invalid("'{}' is not hex bytes", hex);
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    unsigned v = 0;
    auto [p, ec] = std::from_chars(hex.data() + i, hex.data() + i + 2, v, 16);
    if (ec != std::errc() || p != hex.data() + i + 2) return Status::Invalid("'{}' is not hex bytes", hex);
    out.push_back(static_cast<char>(v));
  }
  return out;
}

Status ConvertDefault(const nlohmann::json& v, const iceberg::Type& t, std::string* out) {
  if (v.is_null()) {
    *out += "null";
    return Status::OK();
  }
  auto want = [&](bool ok, const char* what) -> Status {
    if (ok) return Status::OK();
    return Status::Invalid("{} is not a {} value (expected {})", v.dump(), t.ToString(), what);
  };
  switch (t.id) {
    case TypeId::kBoolean:
      RETURN_NOT_OK(want(v.is_boolean(), "true or false"));
      *out += v.get<bool>() ? "true" : "false";
      return Status::OK();
    case TypeId::kInt:
    case TypeId::kLong:
      RETURN_NOT_OK(want(v.is_number_integer(), "an integer"));
      *out += v.is_number_unsigned() ? std::to_string(v.get<uint64_t>()) : std::to_string(v.get<int64_t>());
      return Status::OK();
    case TypeId::kFloat:
      RETURN_NOT_OK(want(v.is_number(), "a number"));
      AppendJsonFloat(v.get<float>(), out);
      return Status::OK();
    case TypeId::kDouble:
      RETURN_NOT_OK(want(v.is_number(), "a number"));
      AppendJsonDouble(v.get<double>(), out);
      return Status::OK();
    case TypeId::kDecimal: {
      RETURN_NOT_OK(want(v.is_string(), "a string such as \"14.20\""));
      ASSIGN_OR_RAISE(auto d, RescaleDecimal(v.get<std::string>(), t.scale));
      AppendJsonString(d, out);
      return Status::OK();
    }
    case TypeId::kDate:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs:
    case TypeId::kString:
      RETURN_NOT_OK(want(v.is_string(), "a string"));
      AppendJsonString(v.get<std::string>(), out);
      return Status::OK();
    case TypeId::kUuid: {
      RETURN_NOT_OK(want(v.is_string(), "a UUID string"));
      std::string u = v.get<std::string>();
      for (auto& c : u) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      AppendJsonString(u, out);
      return Status::OK();
    }
    case TypeId::kFixed:
    case TypeId::kBinary: {
      RETURN_NOT_OK(want(v.is_string(), "a hex string"));
      ASSIGN_OR_RAISE(auto bytes, HexToBytes(v.get<std::string>()));
      AppendJsonString(Base64Encode(bytes), out);
      return Status::OK();
    }
    case TypeId::kStruct: {
      RETURN_NOT_OK(want(v.is_object(), "an object keyed by field id"));
      out->push_back('{');
      for (size_t k = 0; k < t.fields.size(); ++k) {
        const auto& f = t.fields[k];
        if (k) out->push_back(',');
        AppendJsonString(f.name, out);
        out->push_back(':');
        if (auto it = v.find(std::to_string(f.id)); it != v.end()) {
          RETURN_NOT_OK(ConvertDefault(*it, *f.type, out));
        } else if (f.initial_default) {
          ASSIGN_OR_RAISE(auto d, DefaultValueJson(*f.initial_default, *f.type));
          *out += d;
        } else {
          *out += "null";
        }
      }
      out->push_back('}');
      return Status::OK();
    }
    case TypeId::kList: {
      RETURN_NOT_OK(want(v.is_array(), "an array"));
      out->push_back('[');
      for (size_t k = 0; k < v.size(); ++k) {
        if (k) out->push_back(',');
        RETURN_NOT_OK(ConvertDefault(v[k], *t.fields[0].type, out));
      }
      out->push_back(']');
      return Status::OK();
    }
    case TypeId::kMap: {
      RETURN_NOT_OK(want(v.is_object() && v.contains("keys") && v.contains("values") && v["keys"].is_array() &&
                             v["values"].is_array() && v["keys"].size() == v["values"].size(),
                         "{\"keys\": [...], \"values\": [...]}"));
      const bool string_keys = t.fields[0].type->id == TypeId::kString;
      const auto& keys = v["keys"];
      const auto& values = v["values"];
      out->push_back(string_keys ? '{' : '[');
      for (size_t k = 0; k < keys.size(); ++k) {
        if (k) out->push_back(',');
        if (!string_keys) *out += "{\"key\":";
        RETURN_NOT_OK(ConvertDefault(keys[k], *t.fields[0].type, out));
        *out += string_keys ? ":" : ",\"value\":";
        RETURN_NOT_OK(ConvertDefault(values[k], *t.fields[1].type, out));
        if (!string_keys) out->push_back('}');
      }
      out->push_back(string_keys ? '}' : ']');
      return Status::OK();
    }
    default:
      return Status::Unsupported("initial-default of type {} is not supported", t.ToString());
  }
}

Status CheckNested(const iceberg::Type& t, const std::string& path) {
  for (const auto& f : t.fields) {
    const std::string p = path + "." + f.name;
    if (f.initial_default) {
      auto d = DefaultValueJson(*f.initial_default, *f.type);
      if (!d.ok()) return d.status().WithContext(fmt::format("initial-default of field '{}' (id {})", p, f.id));
    }
    if (f.type && f.type->is_nested()) RETURN_NOT_OK(CheckNested(*f.type, p));
  }
  return Status::OK();
}

}  // namespace

Result<std::string> DefaultValueJson(std::string_view metadata_json, const iceberg::Type& type) {
  nlohmann::json v = nlohmann::json::parse(metadata_json, nullptr, /*allow_exceptions=*/false);
  if (v.is_discarded()) return Status::Corrupt("initial-default '{}' is not JSON", metadata_json);
  std::string out;
  RETURN_NOT_OK(ConvertDefault(v, type, &out));
  return out;
}

Status CheckInitialDefaults(const ColumnPath& c, const std::optional<std::string>& initial_default) {
  if (initial_default) {
    auto d = DefaultValueJson(*initial_default, *c.type);
    if (!d.ok()) return d.status().WithContext(fmt::format("initial-default of column '{}'", c.dotted()));
  }
  if (c.type && c.type->is_nested()) RETURN_NOT_OK(CheckNested(*c.type, c.dotted()));
  return Status::OK();
}

// ---------------------------------------------------------------------------
// rows as JSON, projected onto the table schema

struct JsonRowBuilder::Node {
  std::string key;                           // `"name":` of a struct field
  const iceberg::Type* type = nullptr;       // the schema's type
  std::shared_ptr<arrow::Array> array;       // the file's column; null when the file lacks it
  std::vector<std::shared_ptr<arrow::Array>> parents;  // enclosing structs (a null parent = null)
  std::string missing = "null";              // JSON for a column the file lacks
  std::vector<Node> children;                // struct fields in schema order; list element; map key, value
  bool skip = false;                         // a writer-internal "__" field of an unwrapped struct
  bool raw = false;                          // the file's shape differs from the schema's: emit what it holds
};

namespace {

using Node = JsonRowBuilder::Node;

// The child of a struct array with this field id (by name in id-less files).
std::shared_ptr<arrow::Array> StructChild(const arrow::Array& parent, int32_t id, const std::string& name) {
  const auto& st = static_cast<const arrow::StructArray&>(parent);
  const auto& ty = static_cast<const arrow::StructType&>(*parent.type());
  for (int f = 0; f < ty.num_fields(); ++f) {
    if (pq::FieldIdOf(*ty.field(f)) == id) return st.field(f);
  }
  for (int f = 0; f < ty.num_fields(); ++f) {
    if (pq::FieldIdOf(*ty.field(f)) < 0 && ty.field(f)->name() == name) return st.field(f);
  }
  return nullptr;
}

Status BindNode(const iceberg::Type& type, const std::optional<std::string>& initial_default,
                std::shared_ptr<arrow::Array> array, Node* n) {
  n->type = &type;
  n->array = std::move(array);
  if (!n->array) {
    if (initial_default) {
      ASSIGN_OR_RAISE(n->missing, DefaultValueJson(*initial_default, type));
    }
    return Status::OK();
  }
  const arrow::Array& a = *n->array;
  using T = arrow::Type;
  switch (type.id) {
    case TypeId::kStruct:
      if (a.type_id() != T::STRUCT) {
        n->raw = true;
        return Status::OK();
      }
      n->children.resize(type.fields.size());
      for (size_t k = 0; k < type.fields.size(); ++k) {
        const auto& f = type.fields[k];
        Node& c = n->children[k];
        AppendJsonString(f.name, &c.key);
        c.key.push_back(':');
        RETURN_NOT_OK(BindNode(*f.type, f.initial_default, StructChild(a, f.id, f.name), &c));
      }
      return Status::OK();
    case TypeId::kList: {
      std::shared_ptr<arrow::Array> values;
      if (a.type_id() == T::LIST) values = static_cast<const arrow::ListArray&>(a).values();
      else if (a.type_id() == T::LARGE_LIST) values = static_cast<const arrow::LargeListArray&>(a).values();
      if (!values) {
        n->raw = true;
        return Status::OK();
      }
      n->children.resize(1);
      return BindNode(*type.fields[0].type, std::nullopt, values, &n->children[0]);
    }
    case TypeId::kMap: {
      if (a.type_id() != T::MAP) {
        n->raw = true;
        return Status::OK();
      }
      const auto& m = static_cast<const arrow::MapArray&>(a);
      n->children.resize(2);
      RETURN_NOT_OK(BindNode(*type.fields[0].type, std::nullopt, m.keys(), &n->children[0]));
      return BindNode(*type.fields[1].type, std::nullopt, m.items(), &n->children[1]);
    }
    default:
      return Status::OK();
  }
}

void Emit(const Node& n, int64_t i, std::string* out) {
  if (!n.array) {
    *out += n.missing;
    return;
  }
  const arrow::Array& a = *n.array;
  bool null = a.IsNull(i);
  for (const auto& p : n.parents) null = null || p->IsNull(i);
  if (null) {
    *out += "null";
    return;
  }
  if (n.raw) {
    AppendJsonValue(a, i, out);
    return;
  }
  using T = arrow::Type;
  switch (n.type->id) {
    case TypeId::kStruct: {
      out->push_back('{');
      bool first = true;
      for (const auto& c : n.children) {
        if (c.skip) continue;
        if (!first) out->push_back(',');
        first = false;
        *out += c.key;
        Emit(c, i, out);
      }
      out->push_back('}');
      return;
    }
    case TypeId::kList: {
      int64_t begin, end;
      if (a.type_id() == T::LIST) {
        const auto& l = static_cast<const arrow::ListArray&>(a);
        begin = l.value_offset(i);
        end = l.value_offset(i + 1);
      } else {
        const auto& l = static_cast<const arrow::LargeListArray&>(a);
        begin = l.value_offset(i);
        end = l.value_offset(i + 1);
      }
      out->push_back('[');
      for (int64_t j = begin; j < end; ++j) {
        if (j > begin) out->push_back(',');
        Emit(n.children[0], j, out);
      }
      out->push_back(']');
      return;
    }
    case TypeId::kMap: {
      const auto& m = static_cast<const arrow::MapArray&>(a);
      const bool string_keys = n.type->fields[0].type->id == TypeId::kString;
      const int64_t begin = m.value_offset(i), end = m.value_offset(i + 1);
      out->push_back(string_keys ? '{' : '[');
      for (int64_t j = begin; j < end; ++j) {
        if (j > begin) out->push_back(',');
        if (!string_keys) *out += "{\"key\":";
        Emit(n.children[0], j, out);
        *out += string_keys ? ":" : ",\"value\":";
        Emit(n.children[1], j, out);
        if (!string_keys) out->push_back('}');
      }
      out->push_back(string_keys ? '}' : ']');
      return;
    }
    case TypeId::kDouble:
      // A float column promoted to double reads as the double it widens to.
      if (a.type_id() == T::FLOAT) {
        AppendJsonDouble(static_cast<const arrow::FloatArray&>(a).Value(i), out);
        return;
      }
      break;
    case TypeId::kUuid:
      if (a.type_id() == T::FIXED_SIZE_BINARY) {
        AppendJsonString(FormatUuid(static_cast<const arrow::FixedSizeBinaryArray&>(a).GetView(i)), out);
        return;
      }
      break;
    default:
      break;
  }
  AppendJsonValue(a, i, out);
}

}  // namespace

JsonRowBuilder::JsonRowBuilder() = default;
JsonRowBuilder::~JsonRowBuilder() = default;
JsonRowBuilder::JsonRowBuilder(JsonRowBuilder&&) noexcept = default;
JsonRowBuilder& JsonRowBuilder::operator=(JsonRowBuilder&&) noexcept = default;

bool JsonRowBuilder::empty() const { return root_ == nullptr; }

Result<JsonRowBuilder> JsonRowBuilder::Bind(const Layout& layout, const arrow::RecordBatch& batch) {
  JsonRowBuilder b;
  if (layout.value_json.empty()) return b;
  auto bind_column = [&](const ColumnPath& c, Node* n) -> Status {
    std::shared_ptr<arrow::Array> array;
    std::vector<std::shared_ptr<arrow::Array>> parents;
    if (auto acc = Resolve(batch, c)) {
      array = acc->array;
      parents = acc->parents;
    }
    std::optional<std::string> initial_default;
    if (auto it = layout.value_json_defaults.find(c.field_id()); it != layout.value_json_defaults.end()) {
      initial_default = it->second;
    }
    Status st = BindNode(*c.type, initial_default, std::move(array), n);
    if (!st.ok()) return st.WithContext(fmt::format("column '{}'", c.dotted()));
    n->parents = std::move(parents);
    return Status::OK();
  };
  b.root_ = std::make_unique<Node>();
  if (layout.value_json_unwrap && layout.value_json.size() == 1) {
    // A decoded struct: its fields, minus the writers' "__raw__"-style internals.
    b.unwrap_ = true;
    RETURN_NOT_OK(bind_column(layout.value_json[0], b.root_.get()));
    bool any = false;
    for (size_t k = 0; k < b.root_->children.size(); ++k) {
      b.root_->children[k].skip = b.root_->type->fields[k].name.rfind("__", 0) == 0;
      any = any || !b.root_->children[k].skip;
    }
    if (b.root_->array && b.root_->type->id == TypeId::kStruct && !b.root_->raw && !any) b.root_.reset();
    return b;
  }
  // The row: a struct of the value columns.
  static const iceberg::Type kRow = [] {
    iceberg::Type t;
    t.id = TypeId::kStruct;
    return t;
  }();
  b.root_->type = &kRow;
  b.root_->array = nullptr;
  b.root_->children.resize(layout.value_json.size());
  for (size_t k = 0; k < layout.value_json.size(); ++k) {
    const ColumnPath& c = layout.value_json[k];
    Node& n = b.root_->children[k];
    AppendJsonString(c.names.back(), &n.key);
    n.key.push_back(':');
    RETURN_NOT_OK(bind_column(c, &n));
  }
  return b;
}

bool JsonRowBuilder::Append(int64_t row, std::string* out) const {
  if (!root_) return false;
  if (unwrap_) {
    const Node& n = *root_;
    if (!n.array) {
      if (n.missing == "null") return false;
      *out += n.missing;
      return true;
    }
    bool null = n.array->IsNull(row);
    for (const auto& p : n.parents) null = null || p->IsNull(row);
    if (null) return false;
    Emit(n, row, out);
    return true;
  }
  out->push_back('{');
  bool first = true;
  for (const auto& c : root_->children) {
    if (!first) out->push_back(',');
    first = false;
    *out += c.key;
    Emit(c, row, out);
  }
  out->push_back('}');
  return true;
}


}  // namespace thaw::records

// Avro object container files: schema JSON, binary decoding/encoding, codecs.
//
// Everything read here comes from files we did not write, so every length and
// count is checked against the bytes that remain before it is used to
// allocate, and decoding work is bounded by the input size (see
// kValuesPerByte).

#include "thaw/iceberg/avro/avro.h"

#include <snappy.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "thaw/iceberg/avro/binary.h"

namespace thaw::avro {

namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

constexpr std::string_view kMagic("Obj\x01", 4);
constexpr size_t kSyncSize = 16;
// Nesting limit for schemas; decoding recursion follows the schema, so this
// also bounds the decoder's stack.
constexpr int kMaxSchemaDepth = 64;
// Largest decompressed block we accept; real writers flush at ~64 KiB.
constexpr size_t kMaxBlockBytes = size_t{1} << 30;
// Some values occupy zero bytes (null, records, fixed[0]), so a few bytes
// could ask for billions of them: via a huge block or array count, or via a
// schema whose records reuse a named record twice per level (2^depth values
// per datum). A reader may therefore create at most kFreeValues plus
// kValuesPerByte values per decompressed byte it has decoded; real files
// (Iceberg manifests: about one value per byte) stay far below that.
constexpr int64_t kFreeValues = int64_t{1} << 16;
constexpr int64_t kValuesPerByte = 8;
// The writer flushes a block once it holds this many uncompressed bytes.
constexpr size_t kWriterBlockBytes = 64 * 1024;

// ---------------------------------------------------------------------------
// Schema JSON parsing

const char* TypeName(Type t) {
  switch (t) {
    case Type::kNull:
      return "null";
    case Type::kBoolean:
      return "boolean";
    case Type::kInt:
      return "int";
    case Type::kLong:
      return "long";
    case Type::kFloat:
      return "float";
    case Type::kDouble:
      return "double";
    case Type::kBytes:
      return "bytes";
    case Type::kString:
      return "string";
    case Type::kFixed:
      return "fixed";
    case Type::kEnum:
      return "enum";
    case Type::kArray:
      return "array";
    case Type::kMap:
      return "map";
    case Type::kRecord:
      return "record";
    case Type::kUnion:
      return "union";
  }
  return "?";
}

std::optional<Type> PrimitiveType(std::string_view name) {
  if (name == "null") return Type::kNull;
  if (name == "boolean") return Type::kBoolean;
  if (name == "int") return Type::kInt;
  if (name == "long") return Type::kLong;
  if (name == "float") return Type::kFloat;
  if (name == "double") return Type::kDouble;
  if (name == "bytes") return Type::kBytes;
  if (name == "string") return Type::kString;
  return std::nullopt;
}

bool IsNamed(Type t) { return t == Type::kRecord || t == Type::kEnum || t == Type::kFixed; }

class SchemaParser {
 public:
  Result<SchemaPtr> Parse(const Json& j, const std::string& ns, const std::string& path, int depth) {
    if (depth > kMaxSchemaDepth) {
      return Error(path, fmt::format("nested deeper than {} levels", kMaxSchemaDepth));
    }
    if (j.is_string()) return ParseName(j.get_ref<const std::string&>(), ns, path);
    if (j.is_array()) return ParseUnion(j, ns, path, depth);
    if (!j.is_object()) return Error(path, fmt::format("expected a type, got {}", j.type_name()));

    auto type_it = j.find("type");
    if (type_it == j.end()) return Error(path, "object has no \"type\"");
    if (!type_it->is_string()) {
      return Error(path, "\"type\" of a schema object must be a string");
    }
    const std::string& type_name = type_it->get_ref<const std::string&>();
    if (type_name == "record" || type_name == "error") return ParseRecord(j, ns, path, depth);
    if (type_name == "enum") return ParseEnum(j, ns, path);
    if (type_name == "fixed") return ParseFixed(j, ns, path);
    if (type_name == "array") return ParseArray(j, ns, path, depth);
    if (type_name == "map") return ParseMap(j, ns, path, depth);
    if (auto prim = PrimitiveType(type_name)) {
      auto s = std::make_shared<Schema>();
      s->type = *prim;
      RETURN_NOT_OK(ReadCommon(j, s.get(), path, {"type"}));
      return SchemaPtr(std::move(s));
    }
    // {"type": "some.Name"}: a reference to a named type.
    return ParseName(type_name, ns, path);
  }

 private:
  static Status Error(const std::string& path, std::string_view msg) {
    return Status::Corrupt("invalid Avro schema at {}: {}", path, msg);
  }

  static Result<std::optional<int32_t>> ReadId(const Json& j, const char* key, const std::string& path) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::optional<int32_t>();
    if (!it->is_number_integer()) {
      return Error(path, fmt::format("\"{}\" must be an integer", key));
    }
    int64_t id = it->is_number_unsigned() && it->get<uint64_t>() > uint64_t{INT64_MAX} ? INT64_MAX : it->get<int64_t>();
    if (id < std::numeric_limits<int32_t>::min() || id > std::numeric_limits<int32_t>::max()) {
      return Error(path, fmt::format("\"{}\" {} is out of range", key, id));
    }
    return std::optional<int32_t>(static_cast<int32_t>(id));
  }

  static Result<std::string> ReadString(const Json& j, const char* key, const std::string& path) {
    auto it = j.find(key);
    if (it == j.end()) return Error(path, fmt::format("missing \"{}\"", key));
    if (!it->is_string()) return Error(path, fmt::format("\"{}\" must be a string", key));
    return it->get<std::string>();
  }

  // logicalType, and every key not in `structural` kept as an attribute.
  static Status ReadCommon(const Json& j, Schema* s, const std::string& path,
                           std::initializer_list<std::string_view> structural) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& key = it.key();
      if (key == "logicalType") {
        if (!it->is_string()) return Error(path, "\"logicalType\" must be a string");
        s->logical_type = it->get<std::string>();
        continue;
      }
      if (std::find(structural.begin(), structural.end(), key) != structural.end()) continue;
      if (key == "element-id" || key == "key-id" || key == "value-id") continue;
      s->attributes.emplace(key, it->dump());
    }
    return Status::OK();
  }

  Result<std::string> FullName(const Json& j, const std::string& ns, const std::string& path, std::string* type_ns) {
    ASSIGN_OR_RAISE(std::string name, ReadString(j, "name", path));
    if (name.empty()) return Error(path, "empty \"name\"");
    std::string full;
    if (name.find('.') != std::string::npos) {
      full = name;
    } else {
      std::string space = ns;
      auto it = j.find("namespace");
      if (it != j.end() && !it->is_null()) {
        if (!it->is_string()) return Error(path, "\"namespace\" must be a string");
        space = it->get<std::string>();
      }
      full = space.empty() ? name : space + "." + name;
    }
    if (PrimitiveType(full)) return Error(path, fmt::format("cannot redefine '{}'", full));
    if (named_.count(full) || defining_.count(full)) {
      return Error(path, fmt::format("type '{}' defined twice", full));
    }
    size_t dot = full.rfind('.');
    *type_ns = dot == std::string::npos ? std::string() : full.substr(0, dot);
    return full;
  }

  Result<SchemaPtr> ParseName(const std::string& name, const std::string& ns, const std::string& path) {
    if (auto prim = PrimitiveType(name)) {
      auto s = std::make_shared<Schema>();
      s->type = *prim;
      return SchemaPtr(std::move(s));
    }
    std::string candidates[2] = {name, ""};
    if (name.find('.') == std::string::npos && !ns.empty()) {
      candidates[0] = ns + "." + name;
      candidates[1] = name;
    }
    for (const std::string& c : candidates) {
      if (c.empty()) continue;
      if (auto it = named_.find(c); it != named_.end()) return it->second;
      if (defining_.count(c)) {
        return Status::Unsupported("invalid Avro schema at {}: recursive type '{}' is not supported", path, c);
      }
    }
    return Error(path, fmt::format("unknown type '{}'", name));
  }

  Result<SchemaPtr> ParseUnion(const Json& j, const std::string& ns, const std::string& path, int depth) {
    auto s = std::make_shared<Schema>();
    s->type = Type::kUnion;
    s->branches.reserve(j.size());
    for (size_t i = 0; i < j.size(); ++i) {
      std::string sub = fmt::format("{}[{}]", path, i);
      ASSIGN_OR_RAISE(SchemaPtr branch, Parse(j[i], ns, sub, depth + 1));
      if (branch->type == Type::kUnion) return Error(sub, "a union cannot contain a union");
      for (const SchemaPtr& other : s->branches) {
        bool same = other->type == branch->type && (!IsNamed(branch->type) || other->name == branch->name);
        if (same) {
          return Error(sub, fmt::format("duplicate {} branch in union", TypeName(branch->type)));
        }
      }
      s->branches.push_back(std::move(branch));
    }
    if (s->branches.empty()) return Error(path, "empty union");
    return SchemaPtr(std::move(s));
  }

  Result<SchemaPtr> ParseRecord(const Json& j, const std::string& ns, const std::string& path, int depth) {
    auto s = std::make_shared<Schema>();
    s->type = Type::kRecord;
    std::string type_ns;
    ASSIGN_OR_RAISE(s->name, FullName(j, ns, path, &type_ns));
    RETURN_NOT_OK(ReadCommon(j, s.get(), path, {"type", "name", "namespace", "fields"}));
    auto fields = j.find("fields");
    if (fields == j.end() || !fields->is_array()) {
      return Error(path, fmt::format("record '{}' has no \"fields\" array", s->name));
    }
    defining_.insert(s->name);
    s->fields.reserve(fields->size());
    for (size_t i = 0; i < fields->size(); ++i) {
      const Json& f = (*fields)[i];
      std::string fpath = fmt::format("{}.fields[{}]", path, i);
      if (!f.is_object()) return Error(fpath, "field must be an object");
      Field field;
      ASSIGN_OR_RAISE(field.name, ReadString(f, "name", fpath));
      fpath = path + "." + field.name;
      if (s->FieldIndex(field.name) >= 0) {
        return Error(fpath, fmt::format("duplicate field '{}'", field.name));
      }
      ASSIGN_OR_RAISE(field.field_id, ReadId(f, "field-id", fpath));
      auto type = f.find("type");
      if (type == f.end()) return Error(fpath, "field has no \"type\"");
      ASSIGN_OR_RAISE(field.schema, Parse(*type, type_ns, fpath, depth + 1));
      s->fields.push_back(std::move(field));
    }
    defining_.erase(s->name);
    named_.emplace(s->name, s);
    return SchemaPtr(std::move(s));
  }

  Result<SchemaPtr> ParseEnum(const Json& j, const std::string& ns, const std::string& path) {
    auto s = std::make_shared<Schema>();
    s->type = Type::kEnum;
    std::string type_ns;
    ASSIGN_OR_RAISE(s->name, FullName(j, ns, path, &type_ns));
    RETURN_NOT_OK(ReadCommon(j, s.get(), path, {"type", "name", "namespace", "symbols"}));
    auto symbols = j.find("symbols");
    if (symbols == j.end() || !symbols->is_array()) {
      return Error(path, fmt::format("enum '{}' has no \"symbols\" array", s->name));
    }
    std::set<std::string> seen;
    for (const Json& sym : *symbols) {
      if (!sym.is_string()) return Error(path, "enum symbols must be strings");
      if (!seen.insert(sym.get<std::string>()).second) {
        return Error(path, fmt::format("duplicate enum symbol '{}'", sym.get<std::string>()));
      }
      s->symbols.push_back(sym.get<std::string>());
    }
    named_.emplace(s->name, s);
    return SchemaPtr(std::move(s));
  }

  Result<SchemaPtr> ParseFixed(const Json& j, const std::string& ns, const std::string& path) {
    auto s = std::make_shared<Schema>();
    s->type = Type::kFixed;
    std::string type_ns;
    ASSIGN_OR_RAISE(s->name, FullName(j, ns, path, &type_ns));
    RETURN_NOT_OK(ReadCommon(j, s.get(), path, {"type", "name", "namespace", "size"}));
    auto size = j.find("size");
    if (size == j.end() || !size->is_number_integer()) {
      return Error(path, fmt::format("fixed '{}' needs an integer \"size\"", s->name));
    }
    if (size->is_number_unsigned() ? size->get<uint64_t>() > uint64_t{INT32_MAX}
                                   : (size->get<int64_t>() < 0 || size->get<int64_t>() > INT32_MAX)) {
      return Error(path, fmt::format("fixed '{}' has invalid size {}", s->name, size->dump()));
    }
    s->fixed_size = static_cast<int32_t>(size->get<int64_t>());
    named_.emplace(s->name, s);
    return SchemaPtr(std::move(s));
  }

  Result<SchemaPtr> ParseArray(const Json& j, const std::string& ns, const std::string& path, int depth) {
    auto s = std::make_shared<Schema>();
    s->type = Type::kArray;
    RETURN_NOT_OK(ReadCommon(j, s.get(), path, {"type", "items"}));
    ASSIGN_OR_RAISE(s->element_id, ReadId(j, "element-id", path));
    auto items = j.find("items");
    if (items == j.end()) return Error(path, "array has no \"items\"");
    ASSIGN_OR_RAISE(s->items, Parse(*items, ns, path + ".items", depth + 1));
    // Iceberg writes maps with non-string keys as arrays of {key, value}
    // records; surface their ids like a real map's.
    if (s->logical_type == "map" && s->items->type == Type::kRecord) {
      const Schema& kv = *s->items;
      int k = kv.FieldIndex("key");
      int v = kv.FieldIndex("value");
      if (k >= 0) s->key_id = kv.fields[k].field_id;
      if (v >= 0) s->value_id = kv.fields[v].field_id;
    }
    return SchemaPtr(std::move(s));
  }

  Result<SchemaPtr> ParseMap(const Json& j, const std::string& ns, const std::string& path, int depth) {
    auto s = std::make_shared<Schema>();
    s->type = Type::kMap;
    RETURN_NOT_OK(ReadCommon(j, s.get(), path, {"type", "values"}));
    ASSIGN_OR_RAISE(s->key_id, ReadId(j, "key-id", path));
    ASSIGN_OR_RAISE(s->value_id, ReadId(j, "value-id", path));
    auto values = j.find("values");
    if (values == j.end()) return Error(path, "map has no \"values\"");
    ASSIGN_OR_RAISE(s->values, Parse(*values, ns, path + ".values", depth + 1));
    return SchemaPtr(std::move(s));
  }

  std::map<std::string, SchemaPtr> named_;
  std::set<std::string> defining_;  // records whose fields are being parsed
};

// ---------------------------------------------------------------------------
// Schema JSON writing

class SchemaWriter {
 public:
  // `ns` is the enclosing namespace, which unqualified names would inherit.
  OrderedJson Write(const Schema& s, const std::string& ns) {
    if (IsNamed(s.type) && !s.name.empty() && !emitted_.insert(s.name).second) {
      return s.name;  // already defined earlier in this document
    }
    std::string child_ns = ns;
    if (IsNamed(s.type)) {
      size_t dot = s.name.rfind('.');
      child_ns = dot == std::string::npos ? std::string() : s.name.substr(0, dot);
    }
    switch (s.type) {
      case Type::kUnion: {
        OrderedJson arr = OrderedJson::array();
        for (const SchemaPtr& b : s.branches) {
          arr.push_back(b ? Write(*b, ns) : OrderedJson("null"));
        }
        return arr;
      }
      case Type::kNull:
      case Type::kBoolean:
      case Type::kInt:
      case Type::kLong:
      case Type::kFloat:
      case Type::kDouble:
      case Type::kBytes:
      case Type::kString:
        if (s.logical_type.empty() && s.attributes.empty()) return TypeName(s.type);
        break;
      default:
        break;
    }
    OrderedJson j = OrderedJson::object();
    j["type"] = TypeName(s.type);
    if (IsNamed(s.type)) {
      j["name"] = s.name;
      // A name without namespace inside a namespaced type must say so, or a
      // reader would qualify it with the enclosing namespace.
      if (s.name.find('.') == std::string::npos && !ns.empty()) j["namespace"] = "";
    }
    switch (s.type) {
      case Type::kRecord: {
        OrderedJson fields = OrderedJson::array();
        for (const Field& f : s.fields) {
          OrderedJson jf = OrderedJson::object();
          jf["name"] = f.name;
          jf["type"] = f.schema ? Write(*f.schema, child_ns) : OrderedJson("null");
          // Optional fields default to null, as Iceberg's Java writer emits.
          if (f.schema && f.schema->type == Type::kUnion && !f.schema->branches.empty() && f.schema->branches[0] &&
              f.schema->branches[0]->type == Type::kNull) {
            jf["default"] = nullptr;
          }
          if (f.field_id) jf["field-id"] = *f.field_id;
          fields.push_back(std::move(jf));
        }
        j["fields"] = std::move(fields);
        break;
      }
      case Type::kEnum:
        j["symbols"] = s.symbols;
        break;
      case Type::kFixed:
        j["size"] = s.fixed_size;
        break;
      case Type::kArray:
        j["items"] = s.items ? Write(*s.items, ns) : OrderedJson("null");
        if (s.element_id) j["element-id"] = *s.element_id;
        break;
      case Type::kMap:
        j["values"] = s.values ? Write(*s.values, ns) : OrderedJson("null");
        if (s.key_id) j["key-id"] = *s.key_id;
        if (s.value_id) j["value-id"] = *s.value_id;
        break;
      default:
        break;
    }
    if (!s.logical_type.empty()) j["logicalType"] = s.logical_type;
    for (const auto& [key, text] : s.attributes) {
      OrderedJson v = OrderedJson::parse(text, nullptr, /*allow_exceptions=*/false);
      j[key] = v.is_discarded() ? OrderedJson(text) : std::move(v);
    }
    return j;
  }

 private:
  std::set<std::string> emitted_;
};

// ---------------------------------------------------------------------------
// Binary decoding

// How many more values a reader may create (see kValuesPerByte).
int64_t ValueAllowance(int64_t values_created, int64_t bytes_decoded) {
  return kFreeValues + kValuesPerByte * bytes_decoded - values_created;
}

class DatumReader {
 public:
  // `values_created` is the reader's running count; `bytes_before` the bytes
  // it decoded before this datum.
  DatumReader(Decoder* in, const SchemaPtr& root, int64_t* values_created, int64_t bytes_before,
              const std::vector<int32_t>* skip_ids = nullptr)
      : in_(*in), root_(root), values_created_(*values_created), bytes_before_(bytes_before), skip_ids_(skip_ids) {}

  // Decodes past a value without materialising it (projection). Same
  // bounds as Read: counts are checked and every value counts against the
  // allowance.
  Status Skip(const Schema& s) {
    if (Allowance() <= 0) {
      return Status::Corrupt("{} values decoded from only {} bytes (zero-length values repeated beyond the limit)",
                             values_created_, bytes_before_ + static_cast<int64_t>(in_.pos()));
    }
    ++values_created_;
    std::string_view raw;
    int64_t n = 0;
    switch (s.type) {
      case Type::kNull:
        return Status::OK();
      case Type::kBoolean:
        return in_.ReadRaw(1, &raw);
      case Type::kInt:
      case Type::kLong:
      case Type::kEnum:
        return in_.ReadLong(&n);
      case Type::kFloat:
        return in_.ReadRaw(4, &raw);
      case Type::kDouble:
        return in_.ReadRaw(8, &raw);
      case Type::kBytes:
      case Type::kString:
        return in_.ReadBytes(&raw);
      case Type::kFixed:
        return in_.ReadRaw(static_cast<size_t>(s.fixed_size), &raw);
      case Type::kRecord:
        for (const auto& f : s.fields) RETURN_NOT_OK(Skip(*f.schema));
        return Status::OK();
      case Type::kUnion: {
        size_t start = in_.pos();
        RETURN_NOT_OK(in_.ReadLong(&n));
        if (n < 0 || static_cast<uint64_t>(n) >= s.branches.size()) {
          return Status::Corrupt("union branch {} out of range (union has {}) at byte {}", n, s.branches.size(), start);
        }
        return Skip(*s.branches[static_cast<size_t>(n)]);
      }
      case Type::kArray:
      case Type::kMap:
        for (;;) {
          size_t start = in_.pos();
          int64_t count;
          RETURN_NOT_OK(in_.ReadBlockCount(&count));
          if (count == 0) return Status::OK();
          if (static_cast<uint64_t>(count) > in_.remaining() && count > Allowance()) {
            return Status::Corrupt("{} count {} at byte {} exceeds the {} bytes remaining (file truncated or corrupt)",
                                   s.type == Type::kArray ? "array" : "map", count, start, in_.remaining());
          }
          for (int64_t i = 0; i < count; ++i) {
            if (s.type == Type::kMap) RETURN_NOT_OK(in_.ReadBytes(&raw, "map key"));
            RETURN_NOT_OK(Skip(s.type == Type::kArray ? *s.items : *s.values));
          }
        }
    }
    return Status::Internal("unhandled Avro type");
  }

  Status Read(const Schema& s, Value* v) {
    if (Allowance() <= 0) {
      return Status::Corrupt("{} values decoded from only {} bytes (zero-length values repeated beyond the limit)",
                             values_created_, bytes_before_ + static_cast<int64_t>(in_.pos()));
    }
    ++values_created_;
    v->type = s.type;
    v->schema = &s;
    switch (s.type) {
      case Type::kNull:
        return Status::OK();
      case Type::kBoolean: {
        std::string_view raw;
        RETURN_NOT_OK(in_.ReadRaw(1, &raw));
        if (raw[0] != 0 && raw[0] != 1) {
          return Status::Corrupt("invalid boolean byte {} at byte {}", static_cast<int>(static_cast<uint8_t>(raw[0])),
                                 in_.pos() - 1);
        }
        v->boolean = raw[0] == 1;
        return Status::OK();
      }
      case Type::kInt: {
        int32_t i = 0;
        RETURN_NOT_OK(in_.ReadInt(&i));
        v->integer = i;
        return Status::OK();
      }
      case Type::kLong:
        return in_.ReadLong(&v->integer);
      case Type::kFloat:
        return in_.ReadFloat(&v->real);
      case Type::kDouble:
        return in_.ReadDouble(&v->real);
      case Type::kBytes:
      case Type::kString: {
        std::string_view raw;
        RETURN_NOT_OK(in_.ReadBytes(&raw, s.type == Type::kString ? "string" : "bytes"));
        v->bytes.assign(raw);
        return Status::OK();
      }
      case Type::kFixed: {
        std::string_view raw;
        RETURN_NOT_OK(in_.ReadRaw(static_cast<size_t>(s.fixed_size), &raw));
        v->bytes.assign(raw);
        return Status::OK();
      }
      case Type::kEnum: {
        size_t start = in_.pos();
        RETURN_NOT_OK(in_.ReadLong(&v->integer));
        if (v->integer < 0 || static_cast<uint64_t>(v->integer) >= s.symbols.size()) {
          return Status::Corrupt("enum index {} out of range for '{}' at byte {}", v->integer, s.name, start);
        }
        return Status::OK();
      }
      case Type::kArray:
        return ReadArray(s, v);
      case Type::kMap:
        return ReadMap(s, v);
      case Type::kRecord:
        v->schema_owner = root_;
        v->items.resize(s.fields.size());
        for (size_t i = 0; i < s.fields.size(); ++i) {
          const auto& id = s.fields[i].field_id;
          if (skip_ids_ && id && std::binary_search(skip_ids_->begin(), skip_ids_->end(), *id)) {
            RETURN_NOT_OK(Skip(*s.fields[i].schema));
            v->items[i].type = Type::kNull;  // reads as absent
            v->items[i].schema = nullptr;
            continue;
          }
          RETURN_NOT_OK(Read(*s.fields[i].schema, &v->items[i]));
        }
        return Status::OK();
      case Type::kUnion: {
        size_t start = in_.pos();
        int64_t index;
        RETURN_NOT_OK(in_.ReadLong(&index));
        if (index < 0 || static_cast<uint64_t>(index) >= s.branches.size()) {
          return Status::Corrupt("union branch {} out of range (union has {}) at byte {}", index, s.branches.size(),
                                 start);
        }
        return Read(*s.branches[static_cast<size_t>(index)], v);
      }
    }
    return Status::Internal("unhandled Avro type");
  }

 private:
  int64_t Allowance() const { return ValueAllowance(values_created_, bytes_before_ + static_cast<int64_t>(in_.pos())); }

  Status ReadArray(const Schema& s, Value* v) {
    const Schema& item = *s.items;
    size_t used = 0;
    for (;;) {
      size_t start = in_.pos();
      int64_t count;
      RETURN_NOT_OK(in_.ReadBlockCount(&count));
      if (count == 0) {
        v->items.resize(used);
        return Status::OK();
      }
      // Items of at least one byte must fit the remaining bytes; zero-byte
      // items must fit the value allowance. Fail early if neither holds.
      if (static_cast<uint64_t>(count) > in_.remaining() && count > Allowance()) {
        return Status::Corrupt("array count {} at byte {} exceeds the {} bytes remaining (file truncated or corrupt)",
                               count, start, in_.remaining());
      }
      size_t n = static_cast<size_t>(count);
      // Reserve for the first block only: later blocks grow geometrically,
      // so many tiny blocks cannot make this quadratic.
      if (used == 0 && v->items.capacity() < n) v->items.reserve(std::min(n, in_.remaining() + 1));
      for (size_t i = 0; i < n; ++i) {
        // Reuse the elements of a previous datum read into *v (no allocation).
        if (used == v->items.size()) v->items.emplace_back();
        RETURN_NOT_OK(Read(item, &v->items[used++]));
      }
    }
  }

  Status ReadMap(const Schema& s, Value* v) {
    const Schema& item = *s.values;
    size_t used = 0;
    for (;;) {
      size_t start = in_.pos();
      int64_t count;
      RETURN_NOT_OK(in_.ReadBlockCount(&count));
      if (count == 0) {
        v->items.resize(used);
        v->keys.resize(used);
        return Status::OK();
      }
      // Every entry has at least a one-byte key length.
      if (static_cast<uint64_t>(count) > in_.remaining()) {
        return Status::Corrupt("map count {} at byte {} exceeds the {} bytes remaining (file truncated or corrupt)",
                               count, start, in_.remaining());
      }
      size_t n = static_cast<size_t>(count);
      if (used == 0 && v->items.capacity() < n) {
        v->keys.reserve(n);
        v->items.reserve(n);
      }
      v->keys.resize(used);
      for (size_t i = 0; i < n; ++i) {
        std::string_view key;
        RETURN_NOT_OK(in_.ReadBytes(&key, "map key"));
        v->keys.emplace_back(key);
        if (used == v->items.size()) v->items.emplace_back();
        RETURN_NOT_OK(Read(item, &v->items[used++]));
      }
    }
  }

  Decoder& in_;
  const SchemaPtr& root_;
  int64_t& values_created_;
  int64_t bytes_before_;
  const std::vector<int32_t>* skip_ids_;
};

// ---------------------------------------------------------------------------
// Binary encoding

bool IsInteger(Type t) { return t == Type::kInt || t == Type::kLong; }
bool IsReal(Type t) { return t == Type::kFloat || t == Type::kDouble; }
bool IsBlob(Type t) { return t == Type::kBytes || t == Type::kString; }

// Exact match of a value to a (non-union) schema, as used to pick a union
// branch. Named types also match by name when the value carries a schema.
bool MatchesExactly(const Schema& s, const Value& v) {
  if (s.type != v.type) return false;
  if (IsNamed(s.type) && v.schema && !v.schema->name.empty() && v.schema->name != s.name) {
    return false;
  }
  if (s.type == Type::kRecord) return v.items.size() == s.fields.size();
  if (s.type == Type::kFixed) return v.bytes.size() == static_cast<size_t>(s.fixed_size);
  return true;
}

// Loose match: the encoder can convert (int <-> long, float <-> double,
// string <-> bytes, bytes -> fixed of the right size, string -> enum symbol).
bool MatchesLoosely(const Schema& s, const Value& v) {
  if (MatchesExactly(s, v)) return true;
  switch (s.type) {
    case Type::kInt:
    case Type::kLong:
      return IsInteger(v.type);
    case Type::kFloat:
    case Type::kDouble:
      return IsReal(v.type);
    case Type::kBytes:
    case Type::kString:
      return IsBlob(v.type) || v.type == Type::kFixed;
    case Type::kFixed:
      return (IsBlob(v.type) || v.type == Type::kFixed) && v.bytes.size() == static_cast<size_t>(s.fixed_size);
    case Type::kEnum:
      return v.type == Type::kString || v.type == Type::kEnum;
    default:
      return false;
  }
}

Status Mismatch(const Schema& s, const Value& v) {
  return Status::Invalid("expected {}, got a {} value", TypeName(s.type), TypeName(v.type));
}

Status Encode(const Schema& s, const Value& v, std::string* out) {
  switch (s.type) {
    case Type::kNull:
      if (v.type != Type::kNull) return Mismatch(s, v);
      return Status::OK();
    case Type::kBoolean:
      if (v.type != Type::kBoolean) return Mismatch(s, v);
      out->push_back(v.boolean ? 1 : 0);
      return Status::OK();
    case Type::kInt:
      if (!IsInteger(v.type)) return Mismatch(s, v);
      if (v.integer < std::numeric_limits<int32_t>::min() || v.integer > std::numeric_limits<int32_t>::max()) {
        return Status::Invalid("value {} does not fit an Avro int", v.integer);
      }
      WriteLong(v.integer, out);
      return Status::OK();
    case Type::kLong:
      if (!IsInteger(v.type)) return Mismatch(s, v);
      WriteLong(v.integer, out);
      return Status::OK();
    case Type::kFloat: {
      if (!IsReal(v.type)) return Mismatch(s, v);
      // Narrowing an out-of-range finite double to float is undefined.
      if (std::isfinite(v.real) && std::fabs(v.real) > std::numeric_limits<float>::max()) {
        return Status::Invalid("value {} does not fit an Avro float", v.real);
      }
      uint32_t bits = std::bit_cast<uint32_t>(static_cast<float>(v.real));
      if constexpr (std::endian::native == std::endian::big) bits = __builtin_bswap32(bits);
      out->append(reinterpret_cast<const char*>(&bits), 4);
      return Status::OK();
    }
    case Type::kDouble: {
      if (!IsReal(v.type)) return Mismatch(s, v);
      uint64_t bits = std::bit_cast<uint64_t>(v.real);
      if constexpr (std::endian::native == std::endian::big) bits = __builtin_bswap64(bits);
      out->append(reinterpret_cast<const char*>(&bits), 8);
      return Status::OK();
    }
    case Type::kBytes:
    case Type::kString:
      if (!IsBlob(v.type) && v.type != Type::kFixed) return Mismatch(s, v);
      WriteBytes(v.bytes, out);
      return Status::OK();
    case Type::kFixed:
      if (!IsBlob(v.type) && v.type != Type::kFixed) return Mismatch(s, v);
      if (v.bytes.size() != static_cast<size_t>(s.fixed_size)) {
        return Status::Invalid("fixed '{}' needs {} bytes, got {}", s.name, s.fixed_size, v.bytes.size());
      }
      out->append(v.bytes);
      return Status::OK();
    case Type::kEnum: {
      int64_t index = v.integer;
      if (v.type == Type::kString) {
        auto it = std::find(s.symbols.begin(), s.symbols.end(), v.bytes);
        if (it == s.symbols.end()) {
          return Status::Invalid("'{}' is not a symbol of enum '{}'", v.bytes, s.name);
        }
        index = it - s.symbols.begin();
      } else if (v.type != Type::kEnum) {
        return Mismatch(s, v);
      }
      if (index < 0 || static_cast<uint64_t>(index) >= s.symbols.size()) {
        return Status::Invalid("enum index {} out of range for '{}'", index, s.name);
      }
      WriteLong(index, out);
      return Status::OK();
    }
    case Type::kArray:
      if (v.type != Type::kArray) return Mismatch(s, v);
      if (!v.items.empty()) {
        WriteLong(static_cast<int64_t>(v.items.size()), out);
        for (size_t i = 0; i < v.items.size(); ++i) {
          Status st = Encode(*s.items, v.items[i], out);
          if (!st.ok()) return st.WithContext(fmt::format("element {}", i));
        }
      }
      out->push_back(0);
      return Status::OK();
    case Type::kMap:
      if (v.type != Type::kMap) return Mismatch(s, v);
      if (v.keys.size() != v.items.size()) {
        return Status::Invalid("map has {} keys but {} values", v.keys.size(), v.items.size());
      }
      if (!v.items.empty()) {
        WriteLong(static_cast<int64_t>(v.items.size()), out);
        for (size_t i = 0; i < v.items.size(); ++i) {
          WriteBytes(v.keys[i], out);
          Status st = Encode(*s.values, v.items[i], out);
          if (!st.ok()) return st.WithContext(fmt::format("key '{}'", v.keys[i]));
        }
      }
      out->push_back(0);
      return Status::OK();
    case Type::kRecord:
      if (v.type != Type::kRecord) return Mismatch(s, v);
      if (v.items.size() != s.fields.size()) {
        return Status::Invalid("record '{}' has {} fields, value has {}", s.name, s.fields.size(), v.items.size());
      }
      for (size_t i = 0; i < s.fields.size(); ++i) {
        Status st = Encode(*s.fields[i].schema, v.items[i], out);
        if (!st.ok()) return st.WithContext(fmt::format("field '{}'", s.fields[i].name));
      }
      return Status::OK();
    case Type::kUnion: {
      for (int pass = 0; pass < 2; ++pass) {
        for (size_t i = 0; i < s.branches.size(); ++i) {
          const Schema& b = *s.branches[i];
          if (pass == 0 ? MatchesExactly(b, v) : MatchesLoosely(b, v)) {
            WriteLong(static_cast<int64_t>(i), out);
            return Encode(b, v, out);
          }
        }
      }
      return Status::Invalid("no union branch accepts a {} value", TypeName(v.type));
    }
  }
  return Status::Internal("unhandled Avro type");
}

// Rejects schemas the encoder cannot walk (null children), which only
// hand-built schemas can have. Shared subtrees are checked once, as a schema
// reusing a named record at every level has exponentially many paths.
Status CheckSchema(const Schema& s, int depth, std::set<const Schema*>* seen) {
  if (depth > kMaxSchemaDepth) return Status::Invalid("schema nested too deeply");
  if (!seen->insert(&s).second) return Status::OK();
  auto child = [&](const SchemaPtr& c) -> Status {
    if (!c) return Status::Invalid("{} schema has a null child", TypeName(s.type));
    return CheckSchema(*c, depth + 1, seen);
  };
  switch (s.type) {
    case Type::kRecord:
      for (const Field& f : s.fields) RETURN_NOT_OK(child(f.schema));
      break;
    case Type::kArray:
      return child(s.items);
    case Type::kMap:
      return child(s.values);
    case Type::kUnion:
      if (s.branches.empty()) return Status::Invalid("empty union");
      for (const SchemaPtr& b : s.branches) RETURN_NOT_OK(child(b));
      break;
    case Type::kFixed:
      if (s.fixed_size < 0) return Status::Invalid("negative fixed size");
      break;
    default:
      break;
  }
  return Status::OK();
}

// ---------------------------------------------------------------------------
// Codecs

Status Inflate(std::string_view in, std::string* out) {
  if (in.size() > std::numeric_limits<uInt>::max()) return Status::Corrupt("block too large");
  z_stream zs{};
  if (inflateInit2(&zs, -15) != Z_OK) return Status::Internal("inflateInit2 failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  out->clear();
  size_t produced = 0;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (produced == out->size()) {
      if (out->size() >= kMaxBlockBytes) {
        inflateEnd(&zs);
        return Status::Corrupt("deflate block expands beyond {} bytes", kMaxBlockBytes);
      }
      out->resize(std::min(kMaxBlockBytes, std::max<size_t>(out->size() * 2, in.size() * 4 + 1024)));
    }
    zs.next_out = reinterpret_cast<Bytef*>(out->data() + produced);
    zs.avail_out = static_cast<uInt>(std::min<size_t>(out->size() - produced, 1u << 30));
    uInt before = zs.avail_out;
    rc = inflate(&zs, Z_NO_FLUSH);
    produced += before - zs.avail_out;
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
      inflateEnd(&zs);
      return Status::Corrupt("deflate data is truncated");
    }
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
      std::string msg = zs.msg ? zs.msg : "error " + std::to_string(rc);
      inflateEnd(&zs);
      return Status::Corrupt("invalid deflate data: {}", msg);
    }
  }
  inflateEnd(&zs);
  out->resize(produced);
  return Status::OK();
}

Status Deflate(std::string_view in, std::string* out) {
  z_stream zs{};
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Status::Internal("deflateInit2 failed");
  }
  out->resize(deflateBound(&zs, static_cast<uLong>(in.size())));
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out->data());
  zs.avail_out = static_cast<uInt>(out->size());
  int rc = deflate(&zs, Z_FINISH);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) return Status::Internal("deflate failed ({})", rc);
  out->resize(zs.total_out);
  return Status::OK();
}

uint32_t Crc32(std::string_view data) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // crc32 takes a uInt length; feed large inputs in pieces.
  while (!data.empty()) {
    size_t n = std::min<size_t>(data.size(), 1u << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(n));
    data.remove_prefix(n);
  }
  return static_cast<uint32_t>(crc);
}

Status SnappyUncompress(std::string_view in, std::string* out) {
  if (in.size() < 4) return Status::Corrupt("snappy block shorter than its checksum");
  std::string_view body = in.substr(0, in.size() - 4);
  size_t length = 0;
  if (!snappy::GetUncompressedLength(body.data(), body.size(), &length)) {
    return Status::Corrupt("invalid snappy data");
  }
  // Snappy expands at most ~22x (a 3-byte copy emits 64 bytes); a larger
  // claimed length is a lie we should not allocate for.
  if (length > kMaxBlockBytes || length > body.size() * 32 + 64) {
    return Status::Corrupt("snappy block claims {} bytes from {} compressed", length, body.size());
  }
  out->resize(length);
  if (!snappy::RawUncompress(body.data(), body.size(), out->data())) {
    return Status::Corrupt("invalid snappy data");
  }
  const auto* c = reinterpret_cast<const uint8_t*>(in.data() + body.size());
  uint32_t expected = (uint32_t{c[0]} << 24) | (uint32_t{c[1]} << 16) | (uint32_t{c[2]} << 8) | c[3];
  if (Crc32(*out) != expected) return Status::Corrupt("snappy block fails its CRC32 check");
  return Status::OK();
}

void SnappyCompress(std::string_view in, std::string* out) {
  out->resize(snappy::MaxCompressedLength(in.size()) + 4);
  size_t n = 0;
  snappy::RawCompress(in.data(), in.size(), out->data(), &n);
  uint32_t crc = Crc32(in);
  char* p = out->data() + n;
  p[0] = static_cast<char>(crc >> 24);
  p[1] = static_cast<char>(crc >> 16);
  p[2] = static_cast<char>(crc >> 8);
  p[3] = static_cast<char>(crc);
  out->resize(n + 4);
}

Status ZstdUncompress(std::string_view in, std::string* out) {
  unsigned long long declared = ZSTD_getFrameContentSize(in.data(), in.size());
  if (declared == ZSTD_CONTENTSIZE_ERROR) return Status::Corrupt("invalid zstandard data");
  // One shot when a single frame states its size and that size is plausible
  // (zstd's best case is ~32000x, via RLE blocks); otherwise stream, so
  // memory grows only with the output actually produced.
  bool single_frame = ZSTD_findFrameCompressedSize(in.data(), in.size()) == in.size();
  if (single_frame && declared != ZSTD_CONTENTSIZE_UNKNOWN && declared <= kMaxBlockBytes &&
      declared <= static_cast<unsigned long long>(in.size()) * 32768) {
    out->resize(static_cast<size_t>(declared));
    size_t n = ZSTD_decompress(out->data(), out->size(), in.data(), in.size());
    if (ZSTD_isError(n)) {
      return Status::Corrupt("invalid zstandard data: {}", ZSTD_getErrorName(n));
    }
    if (n != declared) return Status::Corrupt("zstandard block is shorter than it declares");
    return Status::OK();
  }
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> ctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
  if (!ctx) return Status::Internal("ZSTD_createDCtx failed");
  out->clear();
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  size_t produced = 0;
  size_t pending = 1;  // last ZSTD_decompressStream result: 0 = frame complete
  while (input.pos < input.size || pending != 0) {
    if (produced == out->size()) {
      if (out->size() >= kMaxBlockBytes) {
        return Status::Corrupt("zstandard block expands beyond {} bytes", kMaxBlockBytes);
      }
      out->resize(std::min(kMaxBlockBytes, std::max<size_t>(out->size() * 2, 64 * 1024)));
    }
    ZSTD_outBuffer output{out->data() + produced, out->size() - produced, 0};
    size_t in_before = input.pos;
    pending = ZSTD_decompressStream(ctx.get(), &output, &input);
    if (ZSTD_isError(pending)) {
      return Status::Corrupt("invalid zstandard data: {}", ZSTD_getErrorName(pending));
    }
    produced += output.pos;
    if (pending != 0 && input.pos == input.size && output.pos == 0 && in_before == input.pos && output.size > 0) {
      return Status::Corrupt("zstandard data is truncated");
    }
  }
  out->resize(produced);
  return Status::OK();
}

Status ZstdCompress(std::string_view in, std::string* out) {
  out->resize(ZSTD_compressBound(in.size()));
  size_t n = ZSTD_compress(out->data(), out->size(), in.data(), in.size(), 3);
  if (ZSTD_isError(n)) return Status::Internal("zstd compression failed: {}", ZSTD_getErrorName(n));
  out->resize(n);
  return Status::OK();
}

// Deterministic 64-bit mixing (splitmix64 finaliser over FNV-1a), used to
// derive the writer's sync marker from its header so output is reproducible.
uint64_t Mix(std::string_view data, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char c : data) h = (h ^ c) * 1099511628211ull;
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

std::string Hex(std::string_view bytes) {
  std::string s;
  for (unsigned char c : bytes) s += fmt::format("{:02x}", c);
  return s;
}

}  // namespace

// ---------------------------------------------------------------------------
// Public API

int Schema::FieldIndex(std::string_view field_name) const {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].name == field_name) return static_cast<int>(i);
  }
  return -1;
}

int Schema::FieldIndexById(int32_t id) const {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].field_id == id) return static_cast<int>(i);
  }
  return -1;
}

const Value* Value::Get(std::string_view field_name) const {
  if (type != Type::kRecord || schema == nullptr) return nullptr;
  int i = schema->FieldIndex(field_name);
  return i >= 0 && static_cast<size_t>(i) < items.size() ? &items[i] : nullptr;
}

const Value* Value::GetById(int32_t field_id) const {
  if (type != Type::kRecord || schema == nullptr) return nullptr;
  int i = schema->FieldIndexById(field_id);
  return i >= 0 && static_cast<size_t>(i) < items.size() ? &items[i] : nullptr;
}

namespace {
Value OfType(Type t) {
  Value v;
  v.type = t;
  return v;
}
}  // namespace

Value Value::Null() { return Value(); }
Value Value::Boolean(bool b) {
  Value v = OfType(Type::kBoolean);
  v.boolean = b;
  return v;
}
Value Value::Int(int32_t i) {
  Value v = OfType(Type::kInt);
  v.integer = i;
  return v;
}
Value Value::Long(int64_t i) {
  Value v = OfType(Type::kLong);
  v.integer = i;
  return v;
}
Value Value::Float(float f) {
  Value v = OfType(Type::kFloat);
  v.real = f;
  return v;
}
Value Value::Double(double d) {
  Value v = OfType(Type::kDouble);
  v.real = d;
  return v;
}
Value Value::String(std::string s) {
  Value v = OfType(Type::kString);
  v.bytes = std::move(s);
  return v;
}
Value Value::Bytes(std::string b) {
  Value v = OfType(Type::kBytes);
  v.bytes = std::move(b);
  return v;
}
Value Value::Fixed(std::string b) {
  Value v = OfType(Type::kFixed);
  v.bytes = std::move(b);
  return v;
}
Value Value::Enum(int32_t symbol_index) {
  Value v = OfType(Type::kEnum);
  v.integer = symbol_index;
  return v;
}
Value Value::Array(std::vector<Value> elements) {
  Value v = OfType(Type::kArray);
  v.items = std::move(elements);
  return v;
}
Value Value::Map(std::vector<std::string> map_keys, std::vector<Value> map_values) {
  Value v = OfType(Type::kMap);
  v.keys = std::move(map_keys);
  v.items = std::move(map_values);
  return v;
}
Value Value::Record(std::vector<Value> field_values) {
  Value v = OfType(Type::kRecord);
  v.items = std::move(field_values);
  return v;
}

Result<SchemaPtr> ParseSchema(std::string_view json_text) { return ParseSchema(json_text, {}); }

Result<SchemaPtr> ParseSchema(std::string_view json_text, std::span<const std::string> named_first) {
  SchemaParser parser;
  auto parse = [&](std::string_view text, const std::string& path) -> Result<SchemaPtr> {
    try {
      Json j = Json::parse(text.begin(), text.end());
      return parser.Parse(j, "", path, 0);
    } catch (const Json::exception& e) {
      return Status::Corrupt("invalid Avro schema JSON{}: {}", path == "$" ? "" : " (" + path + ")", e.what());
    } catch (const std::exception& e) {
      return Status::Corrupt("invalid Avro schema{}: {}", path == "$" ? "" : " (" + path + ")", e.what());
    }
  };
  for (size_t k = 0; k < named_first.size(); ++k) {
    RETURN_NOT_OK(parse(named_first[k], fmt::format("reference {}", k + 1)).status());
  }
  return parse(json_text, "$");
}

std::string SchemaToJson(const Schema& schema) {
  SchemaWriter writer;
  // Hand-built schemas may hold invalid UTF-8; replace it rather than throw.
  return writer.Write(schema, "").dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result<Codec> ParseCodec(std::string_view name) {
  if (name == "null" || name.empty()) return Codec::kNull;
  if (name == "deflate") return Codec::kDeflate;
  if (name == "snappy") return Codec::kSnappy;
  if (name == "zstandard") return Codec::kZstd;
  return Status::Unsupported("unknown codec '{}'", name);
}

std::string_view CodecName(Codec codec) {
  switch (codec) {
    case Codec::kNull:
      return "null";
    case Codec::kDeflate:
      return "deflate";
    case Codec::kSnappy:
      return "snappy";
    case Codec::kZstd:
      return "zstandard";
  }
  return "null";
}

// --- OcfReader --------------------------------------------------------------

OcfReader::~OcfReader() = default;

Status OcfReader::Fail(const Status& st) const {
  return Status(st.code(), fmt::format("{}: {}", source_, st.message()));
}

Result<std::unique_ptr<OcfReader>> OcfReader::Open(std::string data, std::string source) {
  std::unique_ptr<OcfReader> r(new OcfReader());
  r->source_ = std::move(source);
  r->data_ = std::move(data);
  const std::string& bytes = r->data_;

  if (bytes.size() < kMagic.size() || std::string_view(bytes).substr(0, 4) != kMagic) {
    return r->Fail(
        Status::Corrupt("not an Avro file (magic {}, expected 4f626a01)", Hex(std::string_view(bytes).substr(0, 4))));
  }
  Decoder in(std::string_view(bytes).substr(4), 4);
  // Header metadata: an Avro map<bytes>, possibly in several blocks.
  for (;;) {
    int64_t count;
    Status st = in.ReadBlockCount(&count);
    if (!st.ok()) return r->Fail(st.WithContext("header"));
    if (count == 0) break;
    if (static_cast<uint64_t>(count) > in.remaining()) {
      return r->Fail(Status::Corrupt("header metadata count {} exceeds the file size", count));
    }
    for (int64_t i = 0; i < count; ++i) {
      std::string_view key, value;
      st = in.ReadBytes(&key, "metadata key");
      if (st.ok()) st = in.ReadBytes(&value, "metadata value");
      if (!st.ok()) return r->Fail(st.WithContext("header"));
      r->metadata_[std::string(key)] = std::string(value);
    }
  }
  std::string_view sync;
  if (Status st = in.ReadRaw(kSyncSize, &sync); !st.ok()) {
    return r->Fail(st.WithContext("header sync marker"));
  }
  r->sync_.assign(sync);
  r->pos_ = 4 + in.pos();

  auto codec_it = r->metadata_.find("avro.codec");
  if (codec_it != r->metadata_.end()) {
    Result<Codec> codec = ParseCodec(codec_it->second);
    if (!codec.ok()) return r->Fail(codec.status());
    r->codec_ = *codec;
  }
  auto schema_it = r->metadata_.find("avro.schema");
  if (schema_it == r->metadata_.end()) {
    return r->Fail(Status::Corrupt("header has no avro.schema"));
  }
  Result<SchemaPtr> schema = ParseSchema(schema_it->second);
  if (!schema.ok()) return r->Fail(schema.status().WithContext("avro.schema"));
  r->schema_ = std::move(*schema);
  return r;
}

std::optional<std::string> OcfReader::Meta(const std::string& key) const {
  auto it = metadata_.find(key);
  if (it == metadata_.end()) return std::nullopt;
  return it->second;
}

Status OcfReader::LoadBlock() {
  ++block_index_;
  Decoder in(std::string_view(data_).substr(pos_), pos_);
  int64_t count, size;
  Status st = in.ReadLong(&count);
  if (st.ok() && count < 0) {
    st = Status::Corrupt("negative object count {} at byte {}", count, pos_);
  }
  if (st.ok()) st = in.ReadLong(&size);
  if (st.ok() && size < 0) st = Status::Corrupt("negative block size {}", size);
  if (!st.ok()) return Fail(st.WithContext(fmt::format("block {}", block_index_)));
  if (static_cast<uint64_t>(size) > in.remaining()) {
    return Fail(Status::Corrupt("block {} at byte {} declares {} bytes but only {} remain (file truncated or corrupt)",
                                block_index_, pos_, size, in.remaining()));
  }
  std::string_view raw, sync;
  st = in.ReadRaw(static_cast<size_t>(size), &raw);
  if (st.ok()) st = in.ReadRaw(kSyncSize, &sync);
  if (!st.ok() || sync != sync_) {
    return Fail(Status::Corrupt("bad sync marker after block {} (file truncated or corrupt)", block_index_));
  }
  pos_ += in.pos();

  switch (codec_) {
    case Codec::kNull:
      block_view_ = raw;
      break;
    case Codec::kDeflate:
      st = Inflate(raw, &block_);
      break;
    case Codec::kSnappy:
      st = SnappyUncompress(raw, &block_);
      break;
    case Codec::kZstd:
      st = ZstdUncompress(raw, &block_);
      break;
  }
  if (!st.ok()) return Fail(st.WithContext(fmt::format("block {}", block_index_)));
  if (codec_ != Codec::kNull) block_view_ = block_;
  block_pos_ = 0;

  // As for arrays: objects of at least one byte must fit the block, and
  // zero-byte ones the value allowance.
  if (static_cast<uint64_t>(count) > block_view_.size() && count > ValueAllowance(values_created_, bytes_decoded_)) {
    return Fail(
        Status::Corrupt("block {} claims {} objects but holds only {} bytes", block_index_, count, block_view_.size()));
  }
  block_objects_ = count;
  block_remaining_ = count;
  if (count == 0 && !block_view_.empty()) {
    return Fail(Status::Corrupt("block {} has no objects but {} bytes", block_index_, block_view_.size()));
  }
  return Status::OK();
}

Result<bool> OcfReader::Next(Value* out) {
  while (block_remaining_ == 0) {
    if (pos_ >= data_.size()) return false;
    RETURN_NOT_OK(LoadBlock());
  }
  // *out is overwritten in place: a caller reading into the same Value
  // reuses its nested vectors and strings instead of reallocating them.
  Decoder in(block_view_.substr(block_pos_), block_pos_);
  DatumReader reader(&in, schema_, &values_created_, bytes_decoded_, skip_ids_.empty() ? nullptr : &skip_ids_);
  Status st = reader.Read(*schema_, out);
  if (!st.ok()) {
    return Fail(st.WithContext(fmt::format("block {} object {}", block_index_, block_objects_ - block_remaining_)));
  }
  out->schema_owner = schema_;
  block_pos_ += in.pos();
  bytes_decoded_ += static_cast<int64_t>(in.pos());
  --block_remaining_;
  if (block_remaining_ == 0 && block_pos_ != block_view_.size()) {
    return Fail(Status::Corrupt("block {} has {} bytes left after its {} objects", block_index_,
                                block_view_.size() - block_pos_, block_objects_));
  }
  return true;
}

void OcfReader::SkipFieldIds(std::vector<int32_t> ids) {
  std::sort(ids.begin(), ids.end());
  skip_ids_ = std::move(ids);
}

Result<std::vector<Value>> OcfReader::ReadAll() {
  std::vector<Value> values;
  for (;;) {
    Value v;
    ASSIGN_OR_RAISE(bool more, Next(&v));
    if (!more) break;
    values.push_back(std::move(v));
  }
  return values;
}

// --- OcfWriter --------------------------------------------------------------

OcfWriter::~OcfWriter() = default;

Result<std::unique_ptr<OcfWriter>> OcfWriter::Make(SchemaPtr schema, std::map<std::string, std::string> metadata,
                                                   Codec codec) {
  if (!schema) return Status::Invalid("OcfWriter: null schema");
  std::set<const Schema*> seen;
  RETURN_NOT_OK(CheckSchema(*schema, 0, &seen).WithContext("OcfWriter"));
  std::unique_ptr<OcfWriter> w(new OcfWriter());
  w->schema_ = std::move(schema);
  w->codec_ = codec;
  // The writer owns these two keys: they must describe the bytes it writes.
  metadata["avro.schema"] = SchemaToJson(*w->schema_);
  metadata["avro.codec"] = std::string(CodecName(codec));

  w->out_.append(kMagic);
  WriteLong(static_cast<int64_t>(metadata.size()), &w->out_);
  for (const auto& [key, value] : metadata) {
    WriteBytes(key, &w->out_);
    WriteBytes(value, &w->out_);
  }
  WriteLong(0, &w->out_);
  uint64_t a = Mix(w->out_, 1);
  uint64_t b = Mix(w->out_, a);
  w->sync_.resize(kSyncSize);
  std::memcpy(w->sync_.data(), &a, 8);
  std::memcpy(w->sync_.data() + 8, &b, 8);
  w->out_.append(w->sync_);
  return w;
}

Status OcfWriter::Append(const Value& value) {
  if (finished_) return Status::Invalid("OcfWriter: Append after Finish");
  size_t mark = block_.size();
  Status st = Encode(*schema_, value, &block_);
  if (!st.ok()) {
    block_.resize(mark);  // drop the partial datum so the file stays valid
    return st.WithContext("OcfWriter: value does not match the schema");
  }
  ++block_count_;
  if (block_.size() >= kWriterBlockBytes) return FlushBlock();
  return Status::OK();
}

Status OcfWriter::FlushBlock() {
  if (block_count_ == 0) return Status::OK();
  std::string compressed;
  std::string_view payload = block_;
  switch (codec_) {
    case Codec::kNull:
      break;
    case Codec::kDeflate:
      RETURN_NOT_OK(Deflate(block_, &compressed));
      payload = compressed;
      break;
    case Codec::kSnappy:
      SnappyCompress(block_, &compressed);
      payload = compressed;
      break;
    case Codec::kZstd:
      RETURN_NOT_OK(ZstdCompress(block_, &compressed));
      payload = compressed;
      break;
  }
  WriteLong(block_count_, &out_);
  WriteBytes(payload, &out_);
  out_.append(sync_);
  block_.clear();
  block_count_ = 0;
  return Status::OK();
}

Result<std::string> OcfWriter::Finish() {
  if (finished_) return Status::Invalid("OcfWriter: Finish called twice");
  RETURN_NOT_OK(FlushBlock());
  finished_ = true;
  return std::move(out_);
}

}  // namespace thaw::avro

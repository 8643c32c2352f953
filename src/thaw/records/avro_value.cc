#include "thaw/records/avro_value.h"

#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/extension_type.h>
#include <arrow/type.h>
#include <arrow/util/decimal.h>
#include <arrow/util/key_value_metadata.h>
#include <arrow/util/utf8.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <vector>

#include "thaw/iceberg/avro/binary.h"
#include "thaw/parquet/arrow_type.h"
#include "thaw/records/arrow_int.h"
#include "thaw/records/struct_fields.h"

namespace thaw::records {

using avro::Decoder;
using avro::WriteLong;
using iceberg::NestedField;
using iceberg::TypeId;

// clang-format off
enum class Kind {
  kBoolean, kInt, kLong, kFloat, kDouble, kString, kBytes, kFixed, kEnum, kDecimal, kDate,
  kTimeMillis, kTimeMicros, kTimestampMillis, kTimestampMicros, kRecord, kArray, kMap, kUnion,
};
// clang-format on

struct AvroValueSchema::Node {
  Kind kind = Kind::kBoolean;
  const avro::Schema* schema = nullptr;  // the (non-union) Avro type; the union for kUnion
  std::string name;                      // field name (record fields), for error paths
  // The value sits in an Avro union of itself and maybe null: the datum
  // starts with the branch index (union_value for a value, union_null for null).
  bool in_union = false;
  int64_t union_value = -1;
  int64_t union_null = -1;                           // also kUnion's null branch
  std::vector<Node> children;                        // record fields, array item, map value, kUnion branches
  std::vector<int64_t> branches;                     // kUnion: the Avro branch index of each child
  std::unordered_map<std::string_view, int64_t> symbols;  // kEnum: symbol -> index (views into `schema`)
  int32_t size = 0;                                  // kFixed, kDecimal over fixed (0: over bytes)
  int32_t precision = 0;                             // kDecimal
  int32_t scale = 0;
  // kRecord of a schema resolved against a table's struct (Resolve): the
  // index of each child's field in that struct, and the struct's fields the
  // writer schema lacks (null when decoding). Empty slots: positional.
  // Encoding then finds each child's column by name, so arrays of older
  // files (fewer fields) encode too.
  std::vector<int> slots;
  std::vector<int> absent;
  // kInt or kFloat resolved against a wider table column (long, double: the
  // table evolved to a later writer schema that widened it): decoded into
  // that column's builder.
  bool widened = false;
  // A string with logicalType uuid resolved against a table's uuid column
  // (16 bytes: the canonical text both ways), a long with logicalType
  // (local-)timestamp-nanos against a nanosecond timestamp column: what a
  // schema derived from such columns (records/avro_derive.h) encodes.
  bool uuid_column = false;
  bool nanos_column = false;
};

namespace {

using Node = AvroValueSchema::Node;

constexpr int64_t kMillisPerDay = 86'400'000;

// A uuid's 16 bytes as its canonical text (lower-case 8-4-4-4-12) and back.
std::string UuidText(const uint8_t* b) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (int k = 0; k < 16; ++k) {
    if (k == 4 || k == 6 || k == 8 || k == 10) out.push_back('-');
    out.push_back(kHex[b[k] >> 4]);
    out.push_back(kHex[b[k] & 15]);
  }
  return out;
}

std::optional<std::array<uint8_t, 16>> UuidBytes(std::string_view text) {
  if (text.size() != 36) return std::nullopt;
  std::array<uint8_t, 16> out{};
  size_t k = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (text[i] != '-') return std::nullopt;
      continue;
    }
    const char c = text[i];
    int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (v < 0) return std::nullopt;
    out[k / 2] = static_cast<uint8_t>(out[k / 2] | (k % 2 ? v : v << 4));
    ++k;
  }
  return out;
}

std::shared_ptr<const arrow::KeyValueMetadata> IdMeta(int32_t id) {
  return arrow::key_value_metadata({"PARQUET:field_id"}, {std::to_string(id)});
}

Status FromArrow(const arrow::Status& st) {
  if (st.ok()) return Status::OK();
  return Status::IOError("appending a decoded Avro value to Arrow builders: {}", st.ToString());
}

iceberg::TypePtr Primitive(TypeId id) {
  auto t = std::make_shared<iceberg::Type>();
  t->id = id;
  return t;
}

// What one Avro type maps to.
struct Mapped {
  Node node;
  iceberg::TypePtr itype;
  std::shared_ptr<arrow::DataType> atype;
  bool optional = false;
};

// An integer schema attribute ("precision", "scale"), if present and valid.
std::optional<int64_t> IntAttribute(const avro::Schema& s, const char* key) {
  auto it = s.attributes.find(key);
  if (it == s.attributes.end()) return std::nullopt;
  auto j = nlohmann::json::parse(it->second, nullptr, /*allow_exceptions=*/false);
  if (!j.is_number_integer()) return std::nullopt;
  return j.get<int64_t>();
}

bool AdjustToUtc(const avro::Schema& s) {
  auto it = s.attributes.find("adjust-to-utc");
  return it == s.attributes.end() || it->second != "false";
}

class Mapper {
 public:
  explicit Mapper(int32_t first_id) : next_id_(first_id) {}
  int32_t last_id() const { return next_id_ - 1; }

  Result<Mapped> Map(const avro::Schema& s, const std::string& path) {
    if (s.type != avro::Type::kUnion) return MapPlain(s, path);
    int64_t null_index = -1;
    std::vector<int64_t> others;
    for (size_t i = 0; i < s.branches.size(); ++i) {
      if (s.branches[i]->type == avro::Type::kNull) {
        null_index = static_cast<int64_t>(i);
      } else {
        others.push_back(static_cast<int64_t>(i));
      }
    }
    if (others.empty()) {
      return Status::Unsupported("Avro value schema: {} is a union of null alone, which Iceberg cannot hold", path);
    }
    if (others.size() == 1) {
      ASSIGN_OR_RAISE(Mapped m, MapPlain(*s.branches[static_cast<size_t>(others[0])], path));
      m.node.in_union = true;
      m.node.union_value = others[0];
      m.node.union_null = null_index;
      m.optional = null_index >= 0;
      return m;
    }
    // A union of several types: struct<tag, field0, field1, ...>.
    Mapped m;
    m.node.kind = Kind::kUnion;
    m.node.schema = &s;
    m.node.union_null = null_index;
    m.optional = null_index >= 0;
    auto st = std::make_shared<iceberg::Type>();
    st->id = TypeId::kStruct;
    arrow::FieldVector afields;
    int32_t tag_id = next_id_++;
    st->fields.push_back(NestedField{tag_id, "tag", true, Primitive(TypeId::kInt), {}, {}});
    afields.push_back(arrow::field("tag", arrow::int32(), false, IdMeta(tag_id)));
    for (size_t k = 0; k < others.size(); ++k) {
      std::string name = "field" + std::to_string(k);
      int32_t id = next_id_++;
      ASSIGN_OR_RAISE(Mapped b, MapPlain(*s.branches[static_cast<size_t>(others[k])], path + "." + name));
      st->fields.push_back(NestedField{id, name, false, b.itype, {}, {}});
      afields.push_back(arrow::field(name, b.atype, true, IdMeta(id)));
      b.node.name = name;
      m.node.children.push_back(std::move(b.node));
      m.node.branches.push_back(others[k]);
    }
    m.itype = st;
    m.atype = arrow::struct_(afields);
    return m;
  }

 private:
  Result<Mapped> MapPlain(const avro::Schema& s, const std::string& path) {
    Mapped m;
    m.node.schema = &s;
    auto prim = [&](Kind kind, TypeId id, std::shared_ptr<arrow::DataType> atype) -> Result<Mapped> {
      m.node.kind = kind;
      m.itype = Primitive(id);
      m.atype = std::move(atype);
      return std::move(m);
    };
    const std::string& logical = s.logical_type;
    switch (s.type) {
      case avro::Type::kNull:
        return Status::Unsupported("Avro value schema: {} has type null, which Iceberg cannot hold", path);
      case avro::Type::kBoolean:
        return prim(Kind::kBoolean, TypeId::kBoolean, arrow::boolean());
      case avro::Type::kInt:
        if (logical == "date") return prim(Kind::kDate, TypeId::kDate, arrow::date32());
        if (logical == "time-millis") {
          return prim(Kind::kTimeMillis, TypeId::kTime, arrow::time64(arrow::TimeUnit::MICRO));
        }
        return prim(Kind::kInt, TypeId::kInt, arrow::int32());
      case avro::Type::kLong:
        if (logical == "time-micros") {
          return prim(Kind::kTimeMicros, TypeId::kTime, arrow::time64(arrow::TimeUnit::MICRO));
        }
        if (logical == "timestamp-millis" || logical == "timestamp-micros" || logical == "local-timestamp-millis" ||
            logical == "local-timestamp-micros") {
          bool utc = logical.rfind("local-", 0) != 0 && AdjustToUtc(s);
          Kind kind = logical.ends_with("millis") ? Kind::kTimestampMillis : Kind::kTimestampMicros;
          return prim(kind, utc ? TypeId::kTimestampTz : TypeId::kTimestamp,
                      utc ? arrow::timestamp(arrow::TimeUnit::MICRO, "UTC") : arrow::timestamp(arrow::TimeUnit::MICRO));
        }
        return prim(Kind::kLong, TypeId::kLong, arrow::int64());
      case avro::Type::kFloat:
        return prim(Kind::kFloat, TypeId::kFloat, arrow::float32());
      case avro::Type::kDouble:
        return prim(Kind::kDouble, TypeId::kDouble, arrow::float64());
      case avro::Type::kString:
        return prim(Kind::kString, TypeId::kString, arrow::utf8());
      case avro::Type::kEnum:
        for (size_t i = 0; i < s.symbols.size(); ++i) m.node.symbols.emplace(s.symbols[i], static_cast<int64_t>(i));
        return prim(Kind::kEnum, TypeId::kString, arrow::utf8());
      case avro::Type::kBytes:
      case avro::Type::kFixed: {
        const bool fixed = s.type == avro::Type::kFixed;
        if (fixed && s.fixed_size == 0) {
          return Status::Unsupported("Avro value schema: {} is fixed '{}' of size 0, which Parquet cannot store", path,
                                     s.name);
        }
        m.node.size = fixed ? s.fixed_size : 0;
        if (logical == "decimal") {
          // Invalid decimal attributes make the logical type void (Avro spec);
          // wider than 38 digits does not fit Iceberg's decimal: kept as bytes.
          auto precision = IntAttribute(s, "precision");
          auto scale = IntAttribute(s, "scale").value_or(0);
          if (precision && *precision >= 1 && *precision <= 38 && scale >= 0 && scale <= *precision) {
            m.node.kind = Kind::kDecimal;
            m.node.precision = static_cast<int32_t>(*precision);
            m.node.scale = static_cast<int32_t>(scale);
            auto t = std::make_shared<iceberg::Type>();
            t->id = TypeId::kDecimal;
            t->precision = m.node.precision;
            t->scale = m.node.scale;
            m.itype = t;
            m.atype = arrow::decimal128(m.node.precision, m.node.scale);
            return m;
          }
        }
        if (!fixed) return prim(Kind::kBytes, TypeId::kBinary, arrow::binary());
        m.node.kind = Kind::kFixed;
        auto t = std::make_shared<iceberg::Type>();
        t->id = TypeId::kFixed;
        t->length = s.fixed_size;
        m.itype = t;
        m.atype = arrow::fixed_size_binary(s.fixed_size);
        return m;
      }
      case avro::Type::kRecord: {
        if (s.fields.empty()) {
          return Status::Unsupported("Avro value schema: {} is record '{}' with no fields, which Parquet cannot store",
                                     path, s.name);
        }
        m.node.kind = Kind::kRecord;
        auto st = std::make_shared<iceberg::Type>();
        st->id = TypeId::kStruct;
        arrow::FieldVector afields;
        for (const avro::Field& f : s.fields) {
          int32_t id = next_id_++;
          std::string sub = path.empty() ? f.name : path + "." + f.name;
          ASSIGN_OR_RAISE(Mapped c, Map(*f.schema, sub));
          st->fields.push_back(NestedField{id, f.name, !c.optional, c.itype, {}, {}});
          afields.push_back(arrow::field(f.name, c.atype, c.optional, IdMeta(id)));
          c.node.name = f.name;
          m.node.children.push_back(std::move(c.node));
        }
        m.itype = st;
        m.atype = arrow::struct_(afields);
        return m;
      }
      case avro::Type::kArray: {
        m.node.kind = Kind::kArray;
        int32_t id = next_id_++;
        ASSIGN_OR_RAISE(Mapped c, Map(*s.items, path + ".element"));
        auto t = std::make_shared<iceberg::Type>();
        t->id = TypeId::kList;
        t->fields.push_back(NestedField{id, "element", !c.optional, c.itype, {}, {}});
        m.itype = t;
        m.atype = arrow::list(arrow::field("element", c.atype, c.optional, IdMeta(id)));
        c.node.name = "element";
        m.node.children.push_back(std::move(c.node));
        return m;
      }
      case avro::Type::kMap: {
        m.node.kind = Kind::kMap;
        int32_t key_id = next_id_++;
        int32_t value_id = next_id_++;
        ASSIGN_OR_RAISE(Mapped c, Map(*s.values, path + ".value"));
        auto t = std::make_shared<iceberg::Type>();
        t->id = TypeId::kMap;
        t->fields.push_back(NestedField{key_id, "key", true, Primitive(TypeId::kString), {}, {}});
        t->fields.push_back(NestedField{value_id, "value", !c.optional, c.itype, {}, {}});
        m.itype = t;
        m.atype = std::make_shared<arrow::MapType>(arrow::field("key", arrow::utf8(), false, IdMeta(key_id)),
                                                   arrow::field("value", c.atype, c.optional, IdMeta(value_id)));
        c.node.name = "value";
        m.node.children.push_back(std::move(c.node));
        return m;
      }
      case avro::Type::kUnion:
        return Status::Unsupported("Avro value schema: {}: a union directly inside a union", path);
    }
    return Status::Internal("unhandled Avro type at {}", path);
  }

  int32_t next_id_;
};

// Where the walkers were in the schema when an error unwound, for its
// message: the record field names, innermost first (recorded only on the
// error path, so the happy path pays nothing).
class FieldPath {
 public:
  // Called by a walker whose child `name` failed, on the way up.
  void Failed(const std::string& name) { names_.push_back(&name); }
  Status Wrap(const Status& st, std::string_view what) const {
    if (st.ok()) return st;
    if (names_.empty()) return st.WithContext(what);
    std::string path;
    for (auto it = names_.rbegin(); it != names_.rend(); ++it) {
      const std::string* n = *it;
      if (!path.empty()) path += '.';
      path += *n;
    }
    return st.WithContext(fmt::format("{}: field '{}'", what, path));
  }

 private:
  std::vector<const std::string*> names_;
};

// Decodes (and, given builders, appends) one datum. Builders are null while
// validating.
class DatumDecoder {
 public:
  explicit DatumDecoder(std::string_view data) : in_(data) {}
  Decoder& in() { return in_; }
  FieldPath& path() { return path_; }

  Status Walk(const Node& n, arrow::ArrayBuilder* b) {
    if (n.in_union) {
      size_t start = in_.pos();
      int64_t index = 0;
      RETURN_NOT_OK(in_.ReadLong(&index));
      if (n.union_null >= 0 && index == n.union_null) return b ? FromArrow(b->AppendNull()) : Status::OK();
      if (index != n.union_value) return BadBranch(index, n, start);
    }
    switch (n.kind) {
      case Kind::kBoolean: {
        std::string_view raw;
        RETURN_NOT_OK(in_.ReadRaw(1, &raw));
        if (raw[0] != 0 && raw[0] != 1) {
          return Status::Corrupt("invalid boolean byte {} at byte {}", static_cast<int>(static_cast<uint8_t>(raw[0])),
                                 in_.pos() - 1);
        }
        return b ? FromArrow(static_cast<arrow::BooleanBuilder*>(b)->Append(raw[0] == 1)) : Status::OK();
      }
      case Kind::kInt: {
        int32_t v = 0;
        RETURN_NOT_OK(in_.ReadInt(&v));
        if (!b) return Status::OK();
        if (n.widened) return FromArrow(static_cast<arrow::Int64Builder*>(b)->Append(v));
        return FromArrow(static_cast<arrow::Int32Builder*>(b)->Append(v));
      }
      case Kind::kDate: {
        int32_t v = 0;
        RETURN_NOT_OK(in_.ReadInt(&v));
        return b ? FromArrow(static_cast<arrow::Date32Builder*>(b)->Append(v)) : Status::OK();
      }
      case Kind::kTimeMillis:
      case Kind::kTimeMicros: {
        size_t start = in_.pos();
        int64_t v = 0;
        if (n.kind == Kind::kTimeMillis) {
          int32_t ms = 0;
          RETURN_NOT_OK(in_.ReadInt(&ms));
          v = ms;
        } else {
          RETURN_NOT_OK(in_.ReadLong(&v));
        }
        const int64_t per_day = n.kind == Kind::kTimeMillis ? kMillisPerDay : kMillisPerDay * 1000;
        if (v < 0 || v >= per_day) {
          return Status::Corrupt("{} value {} at byte {} is not a time of day", n.schema->logical_type, v, start);
        }
        if (n.kind == Kind::kTimeMillis) v *= 1000;
        return b ? FromArrow(static_cast<arrow::Time64Builder*>(b)->Append(v)) : Status::OK();
      }
      case Kind::kLong: {
        int64_t v = 0;
        RETURN_NOT_OK(in_.ReadLong(&v));
        if (!b) return Status::OK();
        if (n.nanos_column) return FromArrow(static_cast<arrow::TimestampBuilder*>(b)->Append(v));
        return FromArrow(static_cast<arrow::Int64Builder*>(b)->Append(v));
      }
      case Kind::kTimestampMillis:
      case Kind::kTimestampMicros: {
        size_t start = in_.pos();
        int64_t v = 0;
        RETURN_NOT_OK(in_.ReadLong(&v));
        if (n.kind == Kind::kTimestampMillis && __builtin_mul_overflow(v, int64_t{1000}, &v)) {
          return Status::Corrupt("{} value at byte {} overflows microseconds", n.schema->logical_type, start);
        }
        return b ? FromArrow(static_cast<arrow::TimestampBuilder*>(b)->Append(v)) : Status::OK();
      }
      case Kind::kFloat: {
        std::string_view raw;
        RETURN_NOT_OK(in_.ReadRaw(4, &raw));
        if (!b) return Status::OK();
        uint32_t bits;
        std::memcpy(&bits, raw.data(), 4);
        if constexpr (std::endian::native == std::endian::big) bits = __builtin_bswap32(bits);
        if (n.widened) return FromArrow(static_cast<arrow::DoubleBuilder*>(b)->Append(std::bit_cast<float>(bits)));
        return FromArrow(static_cast<arrow::FloatBuilder*>(b)->Append(std::bit_cast<float>(bits)));
      }
      case Kind::kDouble: {
        double v = 0;
        RETURN_NOT_OK(in_.ReadDouble(&v));
        return b ? FromArrow(static_cast<arrow::DoubleBuilder*>(b)->Append(v)) : Status::OK();
      }
      case Kind::kString: {
        size_t start = in_.pos();
        std::string_view v;
        RETURN_NOT_OK(ReadString(&v, "string"));
        if (!b) return Status::OK();
        if (n.uuid_column) {
          auto bytes = UuidBytes(v);
          if (!bytes) return Status::Corrupt("'{}' at byte {} is not a uuid", v, start);
          return FromArrow(static_cast<arrow::FixedSizeBinaryBuilder*>(b)->Append(bytes->data()));
        }
        return FromArrow(static_cast<arrow::StringBuilder*>(b)->Append(v));
      }
      case Kind::kEnum: {
        size_t start = in_.pos();
        int64_t v = 0;
        RETURN_NOT_OK(in_.ReadLong(&v));
        const auto& symbols = n.schema->symbols;
        if (v < 0 || static_cast<uint64_t>(v) >= symbols.size()) {
          return Status::Corrupt("enum index {} out of range for '{}' ({} symbols) at byte {}", v, n.schema->name,
                                 symbols.size(), start);
        }
        return b ? FromArrow(static_cast<arrow::StringBuilder*>(b)->Append(symbols[static_cast<size_t>(v)]))
                 : Status::OK();
      }
      case Kind::kBytes: {
        std::string_view v;
        RETURN_NOT_OK(in_.ReadBytes(&v));
        return b ? FromArrow(static_cast<arrow::BinaryBuilder*>(b)->Append(v)) : Status::OK();
      }
      case Kind::kFixed: {
        std::string_view v;
        RETURN_NOT_OK(in_.ReadRaw(static_cast<size_t>(n.size), &v));
        return b ? FromArrow(static_cast<arrow::FixedSizeBinaryBuilder*>(b)->Append(v)) : Status::OK();
      }
      case Kind::kDecimal:
        return ReadDecimal(n, b);
      case Kind::kRecord: {
        auto* sb = static_cast<arrow::StructBuilder*>(b);
        if (sb) RETURN_NOT_OK(FromArrow(sb->Append()));
        const bool slotted = !n.slots.empty();
        for (size_t i = 0; i < n.children.size(); ++i) {
          const int field = slotted ? n.slots[i] : static_cast<int>(i);
          Status st = Walk(n.children[i], sb ? sb->field_builder(field) : nullptr);
          if (!st.ok()) {
            path_.Failed(n.children[i].name);
            return st;
          }
        }
        if (sb) {
          for (int field : n.absent) RETURN_NOT_OK(FromArrow(sb->field_builder(field)->AppendNull()));
        }
        return Status::OK();
      }
      case Kind::kArray:
      case Kind::kMap: {
        const bool is_map = n.kind == Kind::kMap;
        arrow::ArrayBuilder* items = nullptr;
        arrow::StringBuilder* keys = nullptr;
        if (b && is_map) {
          auto* mb = static_cast<arrow::MapBuilder*>(b);
          RETURN_NOT_OK(FromArrow(mb->Append()));
          keys = static_cast<arrow::StringBuilder*>(mb->key_builder());
          items = mb->item_builder();
        } else if (b) {
          auto* lb = static_cast<arrow::ListBuilder*>(b);
          RETURN_NOT_OK(FromArrow(lb->Append()));
          items = lb->value_builder();
        }
        for (;;) {
          size_t start = in_.pos();
          int64_t count = 0;
          RETURN_NOT_OK(in_.ReadBlockCount(&count));
          if (count == 0) return Status::OK();
          // Every item of a mappable type takes at least one byte.
          if (static_cast<uint64_t>(count) > in_.remaining()) {
            return Status::Corrupt("{} block count {} at byte {} exceeds the {} bytes remaining",
                                   is_map ? "map" : "array", count, start, in_.remaining());
          }
          for (int64_t i = 0; i < count; ++i) {
            if (is_map) {
              std::string_view key;
              RETURN_NOT_OK(ReadString(&key, "map key"));
              if (keys) RETURN_NOT_OK(FromArrow(keys->Append(key)));
            }
            RETURN_NOT_OK(Walk(n.children[0], items));
          }
        }
      }
      case Kind::kUnion: {
        size_t start = in_.pos();
        int64_t index = 0;
        RETURN_NOT_OK(in_.ReadLong(&index));
        if (index >= 0 && index == n.union_null) return b ? FromArrow(b->AppendNull()) : Status::OK();
        auto it = std::find(n.branches.begin(), n.branches.end(), index);
        if (it == n.branches.end()) return BadBranch(index, n, start);
        const size_t k = static_cast<size_t>(it - n.branches.begin());
        auto* sb = static_cast<arrow::StructBuilder*>(b);
        if (sb) {
          RETURN_NOT_OK(FromArrow(sb->Append()));
          RETURN_NOT_OK(
              FromArrow(static_cast<arrow::Int32Builder*>(sb->field_builder(0))->Append(static_cast<int32_t>(k))));
          for (size_t j = 0; j < n.children.size(); ++j) {
            if (j != k) RETURN_NOT_OK(FromArrow(sb->field_builder(static_cast<int>(j + 1))->AppendNull()));
          }
        }
        Status st = Walk(n.children[k], sb ? sb->field_builder(static_cast<int>(k + 1)) : nullptr);
        if (!st.ok()) path_.Failed(n.children[k].name);
        return st;
      }
    }
    return Status::Internal("unhandled Avro value kind");
  }

 private:
  Status BadBranch(int64_t index, const Node& n, size_t start) const {
    size_t branches = n.kind == Kind::kUnion ? n.schema->branches.size()
                                             : static_cast<size_t>(std::max(n.union_value, n.union_null) + 1);
    return Status::Corrupt("union branch {} out of range (union has {}) at byte {}", index, branches, start);
  }

  Status ReadString(std::string_view* v, const char* what) {
    size_t start = in_.pos();
    RETURN_NOT_OK(in_.ReadBytes(v, what));
    if (!arrow::util::ValidateUTF8(*v)) return Status::Corrupt("{} at byte {} is not valid UTF-8", what, start);
    return Status::OK();
  }

  Status ReadDecimal(const Node& n, arrow::ArrayBuilder* b) {
    size_t start = in_.pos();
    std::string_view raw;
    if (n.size > 0) {
      RETURN_NOT_OK(in_.ReadRaw(static_cast<size_t>(n.size), &raw));
    } else {
      RETURN_NOT_OK(in_.ReadBytes(&raw, "decimal"));
    }
    if (raw.empty()) return Status::Corrupt("decimal at byte {} has no bytes", start);
    const auto* p = reinterpret_cast<const uint8_t*>(raw.data());
    size_t len = raw.size();
    // Bytes beyond 16 may only repeat the sign.
    while (len > 16) {
      const uint8_t sign = (p[1] & 0x80) ? 0xff : 0x00;
      if (p[0] != sign) return Status::Corrupt("decimal at byte {} does not fit 128 bits", start);
      ++p;
      --len;
    }
    auto d = arrow::Decimal128::FromBigEndian(p, static_cast<int32_t>(len));
    if (!d.ok()) return Status::Corrupt("decimal at byte {}: {}", start, d.status().ToString());
    const arrow::Decimal128 max = arrow::Decimal128::GetMaxValue(n.precision);
    if (*d > max || *d < -max) {
      return Status::Corrupt("decimal {} at byte {} has more than the schema's {} digits", d->ToIntegerString(), start,
                             n.precision);
    }
    return b ? FromArrow(static_cast<arrow::Decimal128Builder*>(b)->Append(*d)) : Status::OK();
  }

  Decoder in_;
  FieldPath path_;
};

Status ReadHeader(Decoder& in, std::string_view datum, std::optional<int32_t>* schema_id) {
  if (datum.size() < kConfluentHeaderSize) {
    return Status::Corrupt("the Confluent header needs {} bytes, the value has {}", kConfluentHeaderSize, datum.size());
  }
  if (datum[0] != 0) {
    return Status::Corrupt("magic byte {} at byte 0 is not the Confluent header's 0 (is the value framed?)",
                           static_cast<int>(static_cast<uint8_t>(datum[0])));
  }
  std::string_view raw;
  RETURN_NOT_OK(in.ReadRaw(kConfluentHeaderSize, &raw));
  uint32_t id = 0;
  for (size_t i = 1; i < kConfluentHeaderSize; ++i) id = (id << 8) | static_cast<uint8_t>(raw[i]);
  if (schema_id) *schema_id = static_cast<int32_t>(id);
  return Status::OK();
}

// Encodes one Arrow value as Avro.
class DatumEncoder {
 public:
  DatumEncoder(std::string* out, StructFields* fields) : out_(*out), boxed_(*fields) {}
  FieldPath& path() { return path_; }

  Status Walk(const Node& n, const arrow::Array& a, int64_t i) {
    if (a.IsNull(i)) {
      if (n.union_null >= 0) {
        WriteLong(n.union_null, &out_);
        return Status::OK();
      }
      return Status::Invalid("null where the Avro schema has no null");
    }
    if (n.in_union) WriteLong(n.union_value, &out_);
    using T = arrow::Type;
    switch (n.kind) {
      case Kind::kBoolean:
        RETURN_NOT_OK(Expect(a, T::BOOL));
        out_.push_back(static_cast<const arrow::BooleanArray&>(a).Value(i) ? 1 : 0);
        return Status::OK();
      case Kind::kInt: {
        // An int32 column, or a long one the table widened it to (its value must fit).
        ASSIGN_OR_RAISE(int64_t v, GetIntOrLong(a, i));
        if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
          return Status::Invalid("{} does not fit the Avro schema's int", v);
        }
        WriteLong(v, &out_);
        return Status::OK();
      }
      case Kind::kDate:
        RETURN_NOT_OK(Expect(a, T::DATE32));
        WriteLong(static_cast<const arrow::Date32Array&>(a).Value(i), &out_);
        return Status::OK();
      case Kind::kTimeMillis:
      case Kind::kTimeMicros: {
        RETURN_NOT_OK(Expect(a, T::TIME64));
        if (static_cast<const arrow::Time64Type&>(*a.type()).unit() != arrow::TimeUnit::MICRO) {
          return Status::Invalid("time column is not in microseconds ({})", a.type()->ToString());
        }
        return WriteScaled(static_cast<const arrow::Time64Array&>(a).Value(i), n);
      }
      case Kind::kLong: {
        if (n.nanos_column) {
          RETURN_NOT_OK(Expect(a, T::TIMESTAMP));
          if (static_cast<const arrow::TimestampType&>(*a.type()).unit() != arrow::TimeUnit::NANO) {
            return Status::Invalid("timestamp column is not in nanoseconds ({})", a.type()->ToString());
          }
          WriteLong(static_cast<const arrow::TimestampArray&>(a).Value(i), &out_);
          return Status::OK();
        }
        // A long column, or an int32 one of a file written before the table widened it.
        ASSIGN_OR_RAISE(int64_t v, GetIntOrLong(a, i));
        WriteLong(v, &out_);
        return Status::OK();
      }
      case Kind::kTimestampMillis:
      case Kind::kTimestampMicros: {
        RETURN_NOT_OK(Expect(a, T::TIMESTAMP));
        if (static_cast<const arrow::TimestampType&>(*a.type()).unit() != arrow::TimeUnit::MICRO) {
          return Status::Invalid("timestamp column is not in microseconds ({})", a.type()->ToString());
        }
        return WriteScaled(static_cast<const arrow::TimestampArray&>(a).Value(i), n);
      }
      case Kind::kFloat: {
        // A float column, or a double one the table widened it to (its value must be a float's).
        float f = 0;
        if (a.type_id() == T::DOUBLE) {
          const double d = static_cast<const arrow::DoubleArray&>(a).Value(i);
          f = static_cast<float>(d);
          if (static_cast<double>(f) != d && !(std::isnan(d) && std::isnan(f))) {
            return Status::Invalid("{} is not a value of the Avro schema's float", d);
          }
        } else {
          RETURN_NOT_OK(Expect(a, T::FLOAT));
          f = static_cast<const arrow::FloatArray&>(a).Value(i);
        }
        uint32_t bits = std::bit_cast<uint32_t>(f);
        if constexpr (std::endian::native == std::endian::big) bits = __builtin_bswap32(bits);
        out_.append(reinterpret_cast<const char*>(&bits), 4);
        return Status::OK();
      }
      case Kind::kDouble: {
        // A double column, or a float one of a file written before the table widened it.
        double d = 0;
        if (a.type_id() == T::FLOAT) {
          d = static_cast<const arrow::FloatArray&>(a).Value(i);
        } else {
          RETURN_NOT_OK(Expect(a, T::DOUBLE));
          d = static_cast<const arrow::DoubleArray&>(a).Value(i);
        }
        uint64_t bits = std::bit_cast<uint64_t>(d);
        if constexpr (std::endian::native == std::endian::big) bits = __builtin_bswap64(bits);
        out_.append(reinterpret_cast<const char*>(&bits), 8);
        return Status::OK();
      }
      case Kind::kString: {
        if (n.uuid_column) {
          // fixed_size_binary(16), or Arrow's uuid extension type over it.
          const arrow::Array& u =
              a.type_id() == T::EXTENSION ? *static_cast<const arrow::ExtensionArray&>(a).storage() : a;
          if (u.type_id() != T::FIXED_SIZE_BINARY ||
              static_cast<const arrow::FixedSizeBinaryType&>(*u.type()).byte_width() != 16) {
            return Status::Invalid("column of type {} where the Avro schema needs a uuid", a.type()->ToString());
          }
          avro::WriteBytes(UuidText(static_cast<const arrow::FixedSizeBinaryArray&>(u).GetValue(i)), &out_);
          return Status::OK();
        }
        std::string_view v;
        RETURN_NOT_OK(View(a, i, /*text=*/true, &v));
        avro::WriteBytes(v, &out_);
        return Status::OK();
      }
      case Kind::kEnum: {
        std::string_view sym;
        RETURN_NOT_OK(View(a, i, /*text=*/true, &sym));
        // Few symbols (the usual case): compare in order, no hashing.
        const auto& list = n.schema->symbols;
        int64_t index = -1;
        if (list.size() <= 16) {
          for (size_t k = 0; k < list.size(); ++k) {
            if (list[k] == sym) {
              index = static_cast<int64_t>(k);
              break;
            }
          }
        } else if (auto it = n.symbols.find(sym); it != n.symbols.end()) {
          index = it->second;
        }
        if (index < 0) {
          return Status::Invalid("'{}' is not a symbol of enum '{}'", sym, n.schema->name);
        }
        WriteLong(index, &out_);
        return Status::OK();
      }
      case Kind::kBytes: {
        std::string_view v;
        RETURN_NOT_OK(View(a, i, /*text=*/false, &v));
        avro::WriteBytes(v, &out_);
        return Status::OK();
      }
      case Kind::kFixed: {
        RETURN_NOT_OK(Expect(a, T::FIXED_SIZE_BINARY));
        std::string_view v = static_cast<const arrow::FixedSizeBinaryArray&>(a).GetView(i);
        if (v.size() != static_cast<size_t>(n.size)) {
          return Status::Invalid("fixed value of {} bytes for fixed '{}' of size {}", v.size(), n.schema->name, n.size);
        }
        out_.append(v);
        return Status::OK();
      }
      case Kind::kDecimal:
        return WriteDecimal(n, a, i);
      case Kind::kRecord:
      case Kind::kUnion: {
        RETURN_NOT_OK(Expect(a, T::STRUCT));
        const auto& sa = static_cast<const arrow::StructArray&>(a);
        if (!n.slots.empty()) {  // resolved by name: the array may be a newer or older struct than the schema's
          const auto& fields = boxed_.IndexesByName(&n, static_cast<const arrow::StructType&>(*sa.type()), n.children,
                                                    [](const Node& c) -> const std::string& { return c.name; });
          for (size_t k = 0; k < n.children.size(); ++k) {
            const Node& c = n.children[k];
            const int field = fields[k];
            Status child = Status::OK();
            if (field < 0) {
              if (c.union_null < 0) child = Status::Invalid("no column for this field");
              else WriteLong(c.union_null, &out_);
            } else {
              child = Walk(c, boxed_.Field(sa, field), i);
            }
            if (!child.ok()) {
              path_.Failed(c.name);
              return child;
            }
          }
          return Status::OK();
        }
        const size_t want = n.children.size() + (n.kind == Kind::kUnion ? 1 : 0);
        if (static_cast<size_t>(sa.num_fields()) != want) {
          return Status::Invalid("struct has {} fields, the Avro schema {}", sa.num_fields(), want);
        }
        if (n.kind == Kind::kUnion) {
          const auto& tags = boxed_.Field(sa, 0);
          RETURN_NOT_OK(Expect(tags, T::INT32));
          if (tags.IsNull(i)) return Status::Invalid("union tag is null");
          int32_t k = static_cast<const arrow::Int32Array&>(tags).Value(i);
          if (k < 0 || static_cast<size_t>(k) >= n.children.size()) {
            return Status::Invalid("union tag {} out of range ({} branches)", k, n.children.size());
          }
          WriteLong(n.branches[static_cast<size_t>(k)], &out_);
          Status child = Walk(n.children[static_cast<size_t>(k)], boxed_.Field(sa, k + 1), i);
          if (!child.ok()) path_.Failed(n.children[static_cast<size_t>(k)].name);
          return child;
        }
        for (size_t k = 0; k < n.children.size(); ++k) {
          Status child = Walk(n.children[k], boxed_.Field(sa, static_cast<int>(k)), i);
          if (!child.ok()) {
            path_.Failed(n.children[k].name);
            return child;
          }
        }
        return Status::OK();
      }
      case Kind::kArray: {
        int64_t begin = 0, end = 0;
        const arrow::Array* items = nullptr;
        if (a.type_id() == T::LARGE_LIST) {  // pyiceberg and pyarrow write large lists
          const auto& la = static_cast<const arrow::LargeListArray&>(a);
          begin = la.value_offset(i), end = la.value_offset(i + 1), items = la.values().get();
        } else {
          RETURN_NOT_OK(Expect(a, T::LIST));
          const auto& la = static_cast<const arrow::ListArray&>(a);
          begin = la.value_offset(i), end = la.value_offset(i + 1), items = la.values().get();
        }
        if (end > begin) WriteLong(end - begin, &out_);
        for (int64_t j = begin; j < end; ++j) RETURN_NOT_OK(Walk(n.children[0], *items, j));
        WriteLong(0, &out_);
        return Status::OK();
      }
      case Kind::kMap: {
        RETURN_NOT_OK(Expect(a, T::MAP));
        const auto& ma = static_cast<const arrow::MapArray&>(a);
        const auto& keys = *ma.keys();
        const int64_t begin = ma.value_offset(i), end = ma.value_offset(i + 1);
        if (end > begin) WriteLong(end - begin, &out_);
        for (int64_t j = begin; j < end; ++j) {
          if (keys.IsNull(j)) return Status::Invalid("null map key");
          std::string_view key;
          RETURN_NOT_OK(View(keys, j, /*text=*/true, &key));
          avro::WriteBytes(key, &out_);
          RETURN_NOT_OK(Walk(n.children[0], *ma.items(), j));
        }
        WriteLong(0, &out_);
        return Status::OK();
      }
    }
    return Status::Internal("unhandled Avro value kind");
  }

 private:
  // String or binary values of either offset width (Parquet readers give large ones for some writers).
  static Status View(const arrow::Array& a, int64_t i, bool text, std::string_view* out) {
    switch (a.type_id()) {
      case arrow::Type::STRING:
      case arrow::Type::BINARY:
        if (text != (a.type_id() == arrow::Type::STRING)) break;
        *out = static_cast<const arrow::BinaryArray&>(a).GetView(i);
        return Status::OK();
      case arrow::Type::LARGE_STRING:
      case arrow::Type::LARGE_BINARY:
        if (text != (a.type_id() == arrow::Type::LARGE_STRING)) break;
        *out = static_cast<const arrow::LargeBinaryArray&>(a).GetView(i);
        return Status::OK();
      default:
        break;
    }
    return Expect(a, text ? arrow::Type::STRING : arrow::Type::BINARY);
  }

  static Status Expect(const arrow::Array& a, arrow::Type::type id) {
    if (a.type_id() == id) return Status::OK();
    return Status::Invalid("column of type {} where the Avro schema needs {}", a.type()->ToString(),
                           arrow::internal::ToString(id));
  }

  Status WriteScaled(int64_t micros, const Node& n) {
    if (n.kind == Kind::kTimeMillis || n.kind == Kind::kTimestampMillis) {
      if (micros % 1000 != 0) {
        return Status::Invalid("{} microseconds is not a whole number of milliseconds ({})", micros,
                               n.schema->logical_type);
      }
      micros /= 1000;
    }
    WriteLong(micros, &out_);
    return Status::OK();
  }

  Status WriteDecimal(const Node& n, const arrow::Array& a, int64_t i) {
    RETURN_NOT_OK(Expect(a, arrow::Type::DECIMAL128));
    arrow::Decimal128 d(static_cast<const arrow::Decimal128Array&>(a).GetValue(i));
    std::array<uint8_t, 16> le = d.ToBytes();
    uint8_t be[16];
    for (size_t k = 0; k < 16; ++k) be[k] = le[15 - k];
    const uint8_t sign = d.IsNegative() ? 0xff : 0x00;
    if (n.size == 0) {
      // Shortest two's complement (Java's BigInteger.toByteArray).
      size_t skip = 0;
      while (skip < 15 && be[skip] == sign && ((be[skip + 1] & 0x80) != 0) == (sign != 0)) ++skip;
      avro::WriteBytes(std::string_view(reinterpret_cast<const char*>(be) + skip, 16 - skip), &out_);
      return Status::OK();
    }
    const size_t size = static_cast<size_t>(n.size);
    if (size >= 16) {
      out_.append(size - 16, static_cast<char>(sign));
      out_.append(reinterpret_cast<const char*>(be), 16);
      return Status::OK();
    }
    for (size_t k = 0; k < 16 - size; ++k) {
      if (be[k] != sign) return Status::Invalid("decimal {} does not fit fixed[{}]", d.ToIntegerString(), size);
    }
    if (((be[16 - size] & 0x80) != 0) != (sign != 0)) {
      return Status::Invalid("decimal {} does not fit fixed[{}]", d.ToIntegerString(), size);
    }
    out_.append(reinterpret_cast<const char*>(be) + 16 - size, size);
    return Status::OK();
  }

  std::string& out_;
  StructFields& boxed_;  // sa.field(k) without its per-call atomic load
  FieldPath path_;
};

}  // namespace

std::optional<int32_t> ConfluentSchemaId(std::string_view value) {
  if (value.size() < kConfluentHeaderSize || value[0] != 0) return std::nullopt;
  uint32_t id = 0;
  for (size_t i = 1; i < kConfluentHeaderSize; ++i) id = (id << 8) | static_cast<uint8_t>(value[i]);
  return static_cast<int32_t>(id);
}

AvroValueSchema::AvroValueSchema() = default;
AvroValueSchema::~AvroValueSchema() = default;

namespace {
// An Avro schema after the named types of its references.
Result<avro::SchemaPtr> ParseWithReferences(std::string_view json, const SchemaReferences& references) {
  std::vector<std::string> texts;
  for (const auto& r : references) texts.push_back(r.text);
  return avro::ParseSchema(json, texts);
}
}  // namespace

Result<std::shared_ptr<const AvroValueSchema>> AvroValueSchema::Make(std::string_view avro_schema_json,
                                                                     int32_t first_field_id,
                                                                     const SchemaReferences& references) {
  static std::once_flag utf8_once;
  std::call_once(utf8_once, [] { arrow::util::InitializeUTF8(); });
  ASSIGN_OR_RAISE(avro::SchemaPtr avro, ParseWithReferences(avro_schema_json, references));
  if (avro->type != avro::Type::kRecord) {
    return Status::Unsupported(
        "Avro value schema: the top level must be a record (its fields become the value columns), not {}",
        avro::SchemaToJson(*avro).substr(0, 80));
  }
  Mapper mapper(first_field_id);
  ASSIGN_OR_RAISE(Mapped m, mapper.Map(*avro, ""));
  std::shared_ptr<AvroValueSchema> s(new AvroValueSchema());
  s->schema_json_ = std::string(avro_schema_json);
  s->avro_ = std::move(avro);
  s->iceberg_type_ = std::move(m.itype);
  s->arrow_type_ = std::move(m.atype);
  s->last_field_id_ = mapper.last_id();
  s->root_ = std::make_unique<Node>(std::move(m.node));
  return std::shared_ptr<const AvroValueSchema>(std::move(s));
}

namespace {

std::string Sub(const std::string& path, const std::string& name) { return path.empty() ? name : path + "." + name; }

// Binds the writer's mapped tree (node `n`, type `w`) to the table's type
// `t` by field name: fills the records' slots; errors name the field.
Status Bind(Node& n, const iceberg::Type& w, const iceberg::Type& t, const std::string& path) {
  auto differs = [&]() {
    return Status::Invalid("field '{}' is {} in the table but {} in the writer schema", path.empty() ? "value" : path,
                           t.ToString(), w.ToString());
  };
  // A column the table widened (a later writer schema gave long, double or
  // more decimal digits) holds this schema's values as they were; an int or
  // float decodes into the wider builder.
  if (iceberg::CanPromote(w, t)) {
    n.widened = n.kind == Kind::kInt || n.kind == Kind::kFloat;
    return Status::OK();
  }
  const std::string_view logical = n.schema ? std::string_view(n.schema->logical_type) : std::string_view();
  n.uuid_column = t.id == TypeId::kUuid && w.id == TypeId::kString && n.kind == Kind::kString && logical == "uuid";
  n.nanos_column = n.kind == Kind::kLong && w.id == TypeId::kLong &&
                   ((t.id == TypeId::kTimestampTzNs && logical == "timestamp-nanos") ||
                    (t.id == TypeId::kTimestampNs && logical == "local-timestamp-nanos"));
  if (n.uuid_column || n.nanos_column) return Status::OK();
  if (iceberg::CanPromote(t, w)) {
    // NotFound, as for a field the table lacks: Evolve widens the column.
    return Status::NotFound("field '{}' is {} in the table but {} in the writer schema (the table can widen to it)",
                            path.empty() ? "value" : path, t.ToString(), w.ToString());
  }
  if (w.id != t.id) return differs();
  switch (w.id) {
    case TypeId::kStruct: {
      if (n.kind == Kind::kUnion) {  // struct<tag, field0, ...>: the same shape, by position
        if (w.fields.size() != t.fields.size()) return differs();
        for (size_t k = 0; k + 1 < w.fields.size(); ++k) {
          if (t.fields[k + 1].name != w.fields[k + 1].name) return differs();
          RETURN_NOT_OK(Bind(n.children[k], *w.fields[k + 1].type, *t.fields[k + 1].type,
                             Sub(path, w.fields[k + 1].name)));
        }
        return Status::OK();
      }
      std::vector<bool> used(t.fields.size(), false);
      n.slots.clear();
      for (size_t i = 0; i < w.fields.size(); ++i) {
        const auto& wf = w.fields[i];
        auto it = std::find_if(t.fields.begin(), t.fields.end(), [&](const NestedField& f) { return f.name == wf.name; });
        if (it == t.fields.end()) {
          return Status::NotFound("field '{}' of the writer schema is not in the table", Sub(path, wf.name));
        }
        const size_t j = static_cast<size_t>(it - t.fields.begin());
        if (!wf.required && it->required) {
          return Status::Invalid("field '{}' is required in the table but optional in the writer schema",
                                 Sub(path, wf.name));
        }
        RETURN_NOT_OK(Bind(n.children[i], *wf.type, *it->type, Sub(path, wf.name)));
        used[j] = true;
        n.slots.push_back(static_cast<int>(j));
      }
      n.absent.clear();
      for (size_t j = 0; j < t.fields.size(); ++j) {
        if (used[j]) continue;
        if (t.fields[j].required) {
          return Status::Invalid("field '{}' is required in the table but the writer schema lacks it",
                                 Sub(path, t.fields[j].name));
        }
        n.absent.push_back(static_cast<int>(j));
      }
      return Status::OK();
    }
    case TypeId::kList:
      if (!w.fields[0].required && t.fields[0].required) return differs();
      return Bind(n.children[0], *w.fields[0].type, *t.fields[0].type, path + ".element");
    case TypeId::kMap:
      if (!w.fields[1].required && t.fields[1].required) return differs();
      return Bind(n.children[0], *w.fields[1].type, *t.fields[1].type, path + ".value");
    default:
      if (w.precision != t.precision || w.scale != t.scale || w.length != t.length) return differs();
      return Status::OK();
  }
}

}  // namespace

Result<std::shared_ptr<const AvroValueSchema>> AvroValueSchema::Resolve(std::string_view avro_schema_json,
                                                                        const iceberg::TypePtr& table_type,
                                                                        const SchemaReferences& references) {
  if (!table_type || table_type->id != TypeId::kStruct) {
    return Status::Invalid("Avro value schema: the table's value column is not a struct");
  }
  ASSIGN_OR_RAISE(avro::SchemaPtr avro, ParseWithReferences(avro_schema_json, references));
  if (avro->type != avro::Type::kRecord) {
    return Status::Unsupported("Avro value schema: the top level must be a record, not {}",
                               avro::SchemaToJson(*avro).substr(0, 80));
  }
  Mapper mapper(1);
  ASSIGN_OR_RAISE(Mapped m, mapper.Map(*avro, ""));
  RETURN_NOT_OK(Bind(m.node, *m.itype, *table_type, ""));
  std::shared_ptr<AvroValueSchema> s(new AvroValueSchema());
  s->schema_json_ = std::string(avro_schema_json);
  s->avro_ = std::move(avro);  // the nodes point into it; moving the pointer keeps them valid
  s->iceberg_type_ = table_type;
  ASSIGN_OR_RAISE(s->arrow_type_, parquet::ArrowTypeOf(*table_type));
  s->last_field_id_ = mapper.last_id();
  s->root_ = std::make_unique<Node>(std::move(m.node));
  return std::shared_ptr<const AvroValueSchema>(std::move(s));
}

Result<iceberg::TypePtr> AvroValueSchema::Evolve(const iceberg::TypePtr& table_type, std::string_view avro_schema_json,
                                                 int32_t* next_id, const SchemaReferences& references) {
  ASSIGN_OR_RAISE(auto writer, Make(avro_schema_json, 1, references));
  return iceberg::UnionByName(*table_type, *writer->iceberg_type(), next_id);
}

namespace {

Status CheckSame(const iceberg::Type& want, const iceberg::Type& got, const std::string& path) {
  auto differs = [&](std::string_view what) {
    return Status::Invalid("the value column '{}' is {} where the Avro schema gives {} ({} differs)",
                           path.empty() ? "value" : path, got.ToString(), want.ToString(), what);
  };
  if (want.id != got.id || want.precision != got.precision || want.scale != got.scale || want.length != got.length) {
    return differs("type");
  }
  if (want.fields.size() != got.fields.size()) return differs("field count");
  for (size_t i = 0; i < want.fields.size(); ++i) {
    const auto& w = want.fields[i];
    const auto& g = got.fields[i];
    std::string sub = path.empty() ? w.name : path + "." + w.name;
    if (w.name != g.name) return differs(fmt::format("name of field {}", i));
    if (w.id != g.id) return differs(fmt::format("field id of '{}' ({} vs {})", w.name, g.id, w.id));
    if (w.required != g.required) return differs(fmt::format("optionality of '{}'", w.name));
    if (!g.type) return differs(fmt::format("type of '{}'", w.name));
    RETURN_NOT_OK(CheckSame(*w.type, *g.type, sub));
  }
  return Status::OK();
}

}  // namespace

Status AvroValueSchema::CheckMatches(const iceberg::Type& table_type) const {
  return CheckSame(*iceberg_type_, table_type, "");
}

Result<std::unique_ptr<arrow::StructBuilder>> AvroValueSchema::MakeBuilder() const {
  std::unique_ptr<arrow::ArrayBuilder> b;
  RETURN_NOT_OK(FromArrow(arrow::MakeBuilder(arrow::default_memory_pool(), arrow_type_, &b)));
  return std::unique_ptr<arrow::StructBuilder>(static_cast<arrow::StructBuilder*>(b.release()));
}

Status AvroValueSchema::Validate(std::string_view datum, bool framed, std::optional<int32_t>* schema_id) const {
  DatumDecoder dec(datum);
  if (framed) RETURN_NOT_OK(ReadHeader(dec.in(), datum, schema_id).WithContext("Avro value"));
  Status st = dec.Walk(*root_, nullptr);
  if (!st.ok()) return dec.path().Wrap(st, "Avro value");
  if (!dec.in().at_end()) {
    return Status::Corrupt("Avro value: {} bytes after the end of the datum at byte {}", dec.in().remaining(),
                           dec.in().pos());
  }
  return Status::OK();
}

Status AvroValueSchema::Decode(std::string_view datum, bool framed, arrow::StructBuilder* builder,
                               std::optional<int32_t>* schema_id) const {
  const int want = root_->slots.empty() ? static_cast<int>(root_->children.size()) : arrow_type_->num_fields();
  if (builder->num_fields() != want) {
    return Status::Invalid("Avro value: the builder has {} fields, the schema {}", builder->num_fields(), want);
  }
  RETURN_NOT_OK(Validate(datum, framed, schema_id));
  DatumDecoder dec(datum);
  if (framed) RETURN_NOT_OK(ReadHeader(dec.in(), datum, nullptr));
  return dec.path().Wrap(dec.Walk(*root_, builder), "Avro value");
}

Status AvroValueSchema::Encode(const arrow::StructArray& value, int64_t row, std::optional<int32_t> schema_id,
                               std::string* out, StructFields* fields) const {
  if (row < 0 || row >= value.length()) return Status::Invalid("Avro encode: row {} out of range", row);
  if (value.IsNull(row)) return Status::Invalid("Avro encode: the value struct is null in row {}", row);
  const size_t size_before = out->size();
  if (schema_id) {
    out->push_back(0);
    const auto id = static_cast<uint32_t>(*schema_id);
    for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>((id >> shift) & 0xff));
  }
  StructFields once;
  DatumEncoder enc(out, fields ? fields : &once);
  Status st = enc.Walk(*root_, value, row);
  if (!st.ok()) {
    out->resize(size_before);
    return enc.path().Wrap(st, "Avro encode");
  }
  return Status::OK();
}

namespace {

class AvroFramedCodec : public FramedValueCodec {
 public:
  explicit AvroFramedCodec(std::shared_ptr<const AvroValueSchema> s) : s_(std::move(s)) {}
  std::string_view format() const override { return "avro"; }
  const std::string& schema_text() const override { return s_->schema_json(); }
  Status DecodeFramed(std::string_view value, arrow::StructBuilder* builder) const override {
    return s_->Decode(value, /*framed=*/true, builder);
  }
  Status EncodeFramed(const arrow::StructArray& values, int64_t row, int32_t schema_id, std::string* out,
                      StructFields* fields) const override {
    return s_->Encode(values, row, schema_id, out, fields);
  }

 private:
  std::shared_ptr<const AvroValueSchema> s_;
};

}  // namespace

std::shared_ptr<const FramedValueCodec> AvroFramed(std::shared_ptr<const AvroValueSchema> schema) {
  return std::make_shared<AvroFramedCodec>(std::move(schema));
}

}  // namespace thaw::records

#include "thaw/records/protobuf_value.h"

#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/type.h>
#include <google/protobuf/compiler/parser.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <limits>
#include <set>

#include "thaw/parquet/arrow_type.h"
#include "thaw/records/arrow_int.h"
#include "thaw/records/struct_fields.h"
#include "thaw/registry/wire.h"

namespace thaw::records {

namespace pb = google::protobuf;
using iceberg::NestedField;
using iceberg::Type;
using iceberg::TypeId;
using iceberg::TypePtr;

namespace {

constexpr int kMaxDepth = 32;

// One message type bound to a struct: where each of its fields goes.
struct Node {
  const pb::Descriptor* desc = nullptr;
  struct Field {
    const pb::FieldDescriptor* fd = nullptr;
    int slot = 0;                  // the field's index in the struct
    std::unique_ptr<Node> message;  // message fields, list elements and map values of message type
  };
  std::vector<Field> fields;
  std::vector<int> absent;  // the struct's fields the message does not have
};

Status FromArrow(const arrow::Status& st) {
  if (st.ok()) return Status::OK();
  return Status::IOError("appending a decoded Protobuf value to Arrow builders: {}", st.ToString());
}

TypePtr Primitive(TypeId id) {
  auto t = std::make_shared<Type>();
  t->id = id;
  return t;
}

std::string Sub(const std::string& path, const std::string& name) { return path.empty() ? name : path + "." + name; }

class TextErrors : public pb::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (first.empty()) first = fmt::format("line {} column {}: {}", line + 1, column + 1, message);
  }
  std::string first;
};

class PoolErrors : public pb::DescriptorPool::ErrorCollector {
 public:
  void AddError(const std::string& filename, const std::string& element_name, const pb::Message*, ErrorLocation,
                const std::string& message) override {
    if (first.empty()) first = element_name.empty() ? message : fmt::format("{}: {}", element_name, message);
  }
  std::string first;
};

// ---- mapping ---------------------------------------------------------------

class Mapper {
 public:
  explicit Mapper(int32_t next_id) : next_id_(next_id) {}

  Result<TypePtr> Message(const pb::Descriptor* d, const std::string& path) {
    if (!visiting_.insert(d).second || visiting_.size() > kMaxDepth) {
      return Status::Unsupported("Protobuf value schema: {} ({}) is recursive, which Iceberg cannot hold",
                                 path.empty() ? "the message" : path, d->full_name());
    }
    auto t = std::make_shared<Type>();
    t->id = TypeId::kStruct;
    for (int i = 0; i < d->field_count(); ++i) {
      const pb::FieldDescriptor* fd = d->field(i);
      NestedField f;
      f.id = next_id_++;
      f.name = fd->name();
      f.required = false;
      ASSIGN_OR_RAISE(f.type, Field(fd, Sub(path, fd->name())));
      t->fields.push_back(std::move(f));
    }
    visiting_.erase(d);
    if (t->fields.empty()) {
      return Status::Unsupported("Protobuf value schema: {} ({}) has no fields, which Parquet cannot store",
                                 path.empty() ? "the message" : path, d->full_name());
    }
    return TypePtr(t);
  }

 private:
  Result<TypePtr> Field(const pb::FieldDescriptor* fd, const std::string& path) {
    if (fd->is_map()) {
      const pb::Descriptor* entry = fd->message_type();
      auto t = std::make_shared<Type>();
      t->id = TypeId::kMap;
      NestedField k{next_id_++, "key", true, nullptr, {}, {}};
      NestedField v{next_id_++, "value", false, nullptr, {}, {}};
      ASSIGN_OR_RAISE(k.type, Single(entry->map_key(), path + ".key"));
      ASSIGN_OR_RAISE(v.type, Single(entry->map_value(), path + ".value"));
      t->fields = {std::move(k), std::move(v)};
      return TypePtr(t);
    }
    if (fd->is_repeated()) {
      auto t = std::make_shared<Type>();
      t->id = TypeId::kList;
      NestedField e{next_id_++, "element", true, nullptr, {}, {}};
      ASSIGN_OR_RAISE(e.type, Single(fd, path + ".element"));
      t->fields = {std::move(e)};
      return TypePtr(t);
    }
    return Single(fd, path);
  }

  Result<TypePtr> Single(const pb::FieldDescriptor* fd, const std::string& path) {
    switch (fd->type()) {
      case pb::FieldDescriptor::TYPE_BOOL:
        return Primitive(TypeId::kBoolean);
      case pb::FieldDescriptor::TYPE_INT32:
      case pb::FieldDescriptor::TYPE_SINT32:
      case pb::FieldDescriptor::TYPE_SFIXED32:
        return Primitive(TypeId::kInt);
      case pb::FieldDescriptor::TYPE_INT64:
      case pb::FieldDescriptor::TYPE_SINT64:
      case pb::FieldDescriptor::TYPE_SFIXED64:
      case pb::FieldDescriptor::TYPE_UINT32:
      case pb::FieldDescriptor::TYPE_FIXED32:
      case pb::FieldDescriptor::TYPE_UINT64:
      case pb::FieldDescriptor::TYPE_FIXED64:
        return Primitive(TypeId::kLong);
      case pb::FieldDescriptor::TYPE_FLOAT:
        return Primitive(TypeId::kFloat);
      case pb::FieldDescriptor::TYPE_DOUBLE:
        return Primitive(TypeId::kDouble);
      case pb::FieldDescriptor::TYPE_STRING:
      case pb::FieldDescriptor::TYPE_ENUM:
        return Primitive(TypeId::kString);
      case pb::FieldDescriptor::TYPE_BYTES:
        return Primitive(TypeId::kBinary);
      case pb::FieldDescriptor::TYPE_MESSAGE:
        return Message(fd->message_type(), path);
      case pb::FieldDescriptor::TYPE_GROUP:
        return Status::Unsupported("Protobuf value schema: {} is a group, which Thaw does not map", path);
    }
    return Status::Internal("unhandled Protobuf field type at {}", path);
  }

  int32_t next_id_;
  std::set<const pb::Descriptor*> visiting_;
};

// Binds message `d` (its standalone type `w`) to the table's struct `t` by
// field name; errors name the field.
Result<std::unique_ptr<Node>> Bind(const pb::Descriptor* d, const Type& w, const Type& t, const std::string& path);

// The table's column holds the writer's type, or Iceberg's promotion of it
// that Protobuf's wire format shares (int32 -> int64: a table widened by a
// later schema).
bool Holds(TypeId table, TypeId writer) { return table == writer || (writer == TypeId::kInt && table == TypeId::kLong); }

Status BindField(const pb::FieldDescriptor* fd, const Type& w, const Type& t, const std::string& path,
                 std::unique_ptr<Node>* message) {
  auto differs = [&]() {
    return Status::Invalid("field '{}' is {} in the table but {} in the writer schema", path, t.ToString(),
                           w.ToString());
  };
  // A scalar (a field, list element or map value: `sub` of the path) of
  // writer type `wt` into a column of type `tt`.
  auto Scalar = [&](const Type& tt, const Type& wt, const char* sub) -> Status {
    if (tt.id == TypeId::kInt && wt.id == TypeId::kLong) {
      // NotFound, as for a field the table lacks: Evolve widens the column.
      return Status::NotFound("field '{}{}' is {} in the table but {} in the writer schema (the table can widen to it)",
                              path, sub, tt.ToString(), wt.ToString());
    }
    return Holds(tt.id, wt.id) ? Status::OK() : differs();
  };
  RETURN_NOT_OK(Scalar(t, w, ""));
  if (fd->is_map()) {
    if (t.fields.size() != 2 || t.fields[0].type->id != w.fields[0].type->id) return differs();
    const pb::FieldDescriptor* v = fd->message_type()->map_value();
    if (v->type() == pb::FieldDescriptor::TYPE_MESSAGE) {
      ASSIGN_OR_RAISE(*message, Bind(v->message_type(), *w.fields[1].type, *t.fields[1].type, path + ".value"));
      return Status::OK();
    }
    return Scalar(*t.fields[1].type, *w.fields[1].type, ".value");
  }
  if (fd->is_repeated()) {
    if (fd->type() == pb::FieldDescriptor::TYPE_MESSAGE) {
      ASSIGN_OR_RAISE(*message, Bind(fd->message_type(), *w.fields[0].type, *t.fields[0].type, path + ".element"));
      return Status::OK();
    }
    return Scalar(*t.fields[0].type, *w.fields[0].type, ".element");
  }
  if (fd->type() == pb::FieldDescriptor::TYPE_MESSAGE) {
    ASSIGN_OR_RAISE(*message, Bind(fd->message_type(), w, t, path));
  }
  return Status::OK();
}

Result<std::unique_ptr<Node>> Bind(const pb::Descriptor* d, const Type& w, const Type& t, const std::string& path) {
  if (t.id != TypeId::kStruct) {
    return Status::Invalid("field '{}' is {} in the table but a message in the writer schema",
                           path.empty() ? "value" : path, t.ToString());
  }
  auto n = std::make_unique<Node>();
  n->desc = d;
  std::vector<bool> used(t.fields.size(), false);
  for (int i = 0; i < d->field_count(); ++i) {
    const pb::FieldDescriptor* fd = d->field(i);
    const std::string sub = Sub(path, fd->name());
    auto it = std::find_if(t.fields.begin(), t.fields.end(), [&](const NestedField& f) { return f.name == fd->name(); });
    if (it == t.fields.end()) return Status::NotFound("field '{}' of the writer schema is not in the table", sub);
    Node::Field f;
    f.fd = fd;
    f.slot = static_cast<int>(it - t.fields.begin());
    RETURN_NOT_OK(BindField(fd, *w.fields[static_cast<size_t>(i)].type, *it->type, sub, &f.message));
    used[static_cast<size_t>(f.slot)] = true;
    n->fields.push_back(std::move(f));
  }
  for (size_t j = 0; j < t.fields.size(); ++j) {
    if (used[j]) continue;
    if (t.fields[j].required) {
      return Status::Invalid("field '{}' is required in the table but the writer schema lacks it",
                             Sub(path, t.fields[j].name));
    }
    n->absent.push_back(static_cast<int>(j));
  }
  return n;
}

// ---- decoding --------------------------------------------------------------

// Whether `m` can be appended: enum numbers with names, unsigned 64-bit
// values that fit a long.
Status Check(const Node& n, const pb::Message& m, const std::string& path) {
  const pb::Reflection* r = m.GetReflection();
  for (const auto& f : n.fields) {
    const pb::FieldDescriptor* fd = f.fd;
    const std::string sub = Sub(path, fd->name());
    const int count = fd->is_repeated() ? r->FieldSize(m, fd) : 1;
    if (!fd->is_repeated() && fd->has_presence() && !r->HasField(m, fd)) continue;
    for (int i = 0; i < count; ++i) {
      const pb::Message* child = nullptr;
      const pb::FieldDescriptor* v = fd;
      if (fd->is_map()) {
        child = &r->GetRepeatedMessage(m, fd, i);
        v = fd->message_type()->map_value();
        const pb::FieldDescriptor* k = fd->message_type()->map_key();
        if (k->type() == pb::FieldDescriptor::TYPE_UINT64 || k->type() == pb::FieldDescriptor::TYPE_FIXED64) {
          if (child->GetReflection()->GetUInt64(*child, k) >
              static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
            return Status::Corrupt("{}: a uint64 map key above 2^63-1", sub);
          }
        }
      }
      const pb::Message& holder = child ? *child : m;
      const pb::Reflection* hr = holder.GetReflection();
      const bool rep = !child && fd->is_repeated();
      switch (v->cpp_type()) {
        case pb::FieldDescriptor::CPPTYPE_UINT64: {
          uint64_t x = rep ? hr->GetRepeatedUInt64(holder, v, i) : hr->GetUInt64(holder, v);
          if (x > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
            return Status::Corrupt("{}: uint64 value {} does not fit a long", sub, x);
          }
          break;
        }
        case pb::FieldDescriptor::CPPTYPE_ENUM: {
          int x = rep ? hr->GetRepeatedEnumValue(holder, v, i) : hr->GetEnumValue(holder, v);
          if (!v->enum_type()->FindValueByNumber(x)) {
            return Status::Corrupt("{}: enum number {} has no name in {}", sub, x, v->enum_type()->full_name());
          }
          break;
        }
        case pb::FieldDescriptor::CPPTYPE_MESSAGE: {
          const pb::Message& sm = rep ? hr->GetRepeatedMessage(holder, v, i) : hr->GetMessage(holder, v);
          if (f.message) RETURN_NOT_OK(Check(*f.message, sm, sub));
          break;
        }
        default:
          break;
      }
    }
  }
  return Status::OK();
}

Status AppendMessage(const Node& n, const pb::Message& m, arrow::StructBuilder* b);

// Appends one value of `v` (singular: of `holder`; repeated: element i) to `b`.
Status AppendValue(const pb::FieldDescriptor* v, const pb::Message& holder, int i, const Node* message,
                   arrow::ArrayBuilder* b) {
  const pb::Reflection* r = holder.GetReflection();
  const bool rep = i >= 0;
  switch (v->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_BOOL:
      return FromArrow(static_cast<arrow::BooleanBuilder*>(b)->Append(rep ? r->GetRepeatedBool(holder, v, i)
                                                                           : r->GetBool(holder, v)));
    case pb::FieldDescriptor::CPPTYPE_INT32: {
      const int32_t x = rep ? r->GetRepeatedInt32(holder, v, i) : r->GetInt32(holder, v);
      // A long column: the table widened this int32 field (a later schema made it int64).
      if (b->type()->id() == arrow::Type::INT64) return FromArrow(static_cast<arrow::Int64Builder*>(b)->Append(x));
      return FromArrow(static_cast<arrow::Int32Builder*>(b)->Append(x));
    }
    case pb::FieldDescriptor::CPPTYPE_INT64:
      return FromArrow(static_cast<arrow::Int64Builder*>(b)->Append(rep ? r->GetRepeatedInt64(holder, v, i)
                                                                         : r->GetInt64(holder, v)));
    case pb::FieldDescriptor::CPPTYPE_UINT32:
      return FromArrow(static_cast<arrow::Int64Builder*>(b)->Append(rep ? r->GetRepeatedUInt32(holder, v, i)
                                                                         : r->GetUInt32(holder, v)));
    case pb::FieldDescriptor::CPPTYPE_UINT64:
      return FromArrow(static_cast<arrow::Int64Builder*>(b)->Append(
          static_cast<int64_t>(rep ? r->GetRepeatedUInt64(holder, v, i) : r->GetUInt64(holder, v))));
    case pb::FieldDescriptor::CPPTYPE_FLOAT:
      return FromArrow(static_cast<arrow::FloatBuilder*>(b)->Append(rep ? r->GetRepeatedFloat(holder, v, i)
                                                                         : r->GetFloat(holder, v)));
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
      return FromArrow(static_cast<arrow::DoubleBuilder*>(b)->Append(rep ? r->GetRepeatedDouble(holder, v, i)
                                                                          : r->GetDouble(holder, v)));
    case pb::FieldDescriptor::CPPTYPE_ENUM: {
      const int x = rep ? r->GetRepeatedEnumValue(holder, v, i) : r->GetEnumValue(holder, v);
      return FromArrow(static_cast<arrow::StringBuilder*>(b)->Append(v->enum_type()->FindValueByNumber(x)->name()));
    }
    case pb::FieldDescriptor::CPPTYPE_STRING: {
      std::string scratch;
      const std::string& s = rep ? r->GetRepeatedStringReference(holder, v, i, &scratch)
                                 : r->GetStringReference(holder, v, &scratch);
      if (v->type() == pb::FieldDescriptor::TYPE_BYTES) {
        return FromArrow(static_cast<arrow::BinaryBuilder*>(b)->Append(s));
      }
      return FromArrow(static_cast<arrow::StringBuilder*>(b)->Append(s));
    }
    case pb::FieldDescriptor::CPPTYPE_MESSAGE:
      return AppendMessage(*message, rep ? r->GetRepeatedMessage(holder, v, i) : r->GetMessage(holder, v),
                           static_cast<arrow::StructBuilder*>(b));
  }
  return Status::Internal("unhandled Protobuf type");
}

Status AppendMessage(const Node& n, const pb::Message& m, arrow::StructBuilder* b) {
  RETURN_NOT_OK(FromArrow(b->Append()));
  const pb::Reflection* r = m.GetReflection();
  for (const auto& f : n.fields) {
    const pb::FieldDescriptor* fd = f.fd;
    arrow::ArrayBuilder* child = b->field_builder(f.slot);
    if (fd->is_map()) {
      auto* mb = static_cast<arrow::MapBuilder*>(child);
      RETURN_NOT_OK(FromArrow(mb->Append()));
      const pb::FieldDescriptor* k = fd->message_type()->map_key();
      const pb::FieldDescriptor* v = fd->message_type()->map_value();
      for (int i = 0; i < r->FieldSize(m, fd); ++i) {
        const pb::Message& entry = r->GetRepeatedMessage(m, fd, i);
        RETURN_NOT_OK(AppendValue(k, entry, -1, nullptr, mb->key_builder()));
        RETURN_NOT_OK(AppendValue(v, entry, -1, f.message.get(), mb->item_builder()));
      }
    } else if (fd->is_repeated()) {
      auto* lb = static_cast<arrow::ListBuilder*>(child);
      RETURN_NOT_OK(FromArrow(lb->Append()));
      for (int i = 0; i < r->FieldSize(m, fd); ++i) {
        RETURN_NOT_OK(AppendValue(fd, m, i, f.message.get(), lb->value_builder()));
      }
    } else if (fd->has_presence() && !r->HasField(m, fd)) {
      RETURN_NOT_OK(FromArrow(child->AppendNull()));
    } else {
      RETURN_NOT_OK(AppendValue(fd, m, -1, f.message.get(), child));
    }
  }
  for (int slot : n.absent) RETURN_NOT_OK(FromArrow(b->field_builder(slot)->AppendNull()));
  return Status::OK();
}

// ---- encoding --------------------------------------------------------------

Status View(const arrow::Array& a, int64_t i, std::string_view* out) {
  switch (a.type_id()) {
    case arrow::Type::STRING:
    case arrow::Type::BINARY:
      *out = static_cast<const arrow::BinaryArray&>(a).GetView(i);
      return Status::OK();
    case arrow::Type::LARGE_STRING:
    case arrow::Type::LARGE_BINARY:
      *out = static_cast<const arrow::LargeBinaryArray&>(a).GetView(i);
      return Status::OK();
    default:
      return Status::Invalid("column of type {} where the schema has a string or bytes field", a.type()->ToString());
  }
}

Status SetMessage(const Node& n, const arrow::StructArray& a, int64_t i, pb::Message* m, StructFields& boxed);

// Sets (singular) or adds (repeated) one value of `v` in `m` from a[i].
Status SetValue(const pb::FieldDescriptor* v, bool add, const Node* message, const arrow::Array& a, int64_t i,
                StructFields& boxed, pb::Message* m) {
  const pb::Reflection* r = m->GetReflection();
  switch (v->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_BOOL: {
      if (a.type_id() != arrow::Type::BOOL) return Status::Invalid("column of type {} for bool", a.type()->ToString());
      const bool x = static_cast<const arrow::BooleanArray&>(a).Value(i);
      add ? r->AddBool(m, v, x) : r->SetBool(m, v, x);
      return Status::OK();
    }
    case pb::FieldDescriptor::CPPTYPE_INT32:
    case pb::FieldDescriptor::CPPTYPE_INT64:
    case pb::FieldDescriptor::CPPTYPE_UINT32:
    case pb::FieldDescriptor::CPPTYPE_UINT64: {
      ASSIGN_OR_RAISE(int64_t x, GetIntOrLong(a, i));
      switch (v->cpp_type()) {
        case pb::FieldDescriptor::CPPTYPE_INT32:
          if (x < std::numeric_limits<int32_t>::min() || x > std::numeric_limits<int32_t>::max()) {
            return Status::Invalid("{} does not fit int32", x);
          }
          add ? r->AddInt32(m, v, static_cast<int32_t>(x)) : r->SetInt32(m, v, static_cast<int32_t>(x));
          break;
        case pb::FieldDescriptor::CPPTYPE_INT64:
          add ? r->AddInt64(m, v, x) : r->SetInt64(m, v, x);
          break;
        case pb::FieldDescriptor::CPPTYPE_UINT32:
          if (x < 0 || x > std::numeric_limits<uint32_t>::max()) return Status::Invalid("{} does not fit uint32", x);
          add ? r->AddUInt32(m, v, static_cast<uint32_t>(x)) : r->SetUInt32(m, v, static_cast<uint32_t>(x));
          break;
        default:
          if (x < 0) return Status::Invalid("{} does not fit uint64", x);
          add ? r->AddUInt64(m, v, static_cast<uint64_t>(x)) : r->SetUInt64(m, v, static_cast<uint64_t>(x));
          break;
      }
      return Status::OK();
    }
    case pb::FieldDescriptor::CPPTYPE_FLOAT: {
      if (a.type_id() != arrow::Type::FLOAT) return Status::Invalid("column of type {} for float", a.type()->ToString());
      const float x = static_cast<const arrow::FloatArray&>(a).Value(i);
      add ? r->AddFloat(m, v, x) : r->SetFloat(m, v, x);
      return Status::OK();
    }
    case pb::FieldDescriptor::CPPTYPE_DOUBLE: {
      if (a.type_id() != arrow::Type::DOUBLE) {
        return Status::Invalid("column of type {} for double", a.type()->ToString());
      }
      const double x = static_cast<const arrow::DoubleArray&>(a).Value(i);
      add ? r->AddDouble(m, v, x) : r->SetDouble(m, v, x);
      return Status::OK();
    }
    case pb::FieldDescriptor::CPPTYPE_ENUM: {
      std::string_view name;
      RETURN_NOT_OK(View(a, i, &name));
      const pb::EnumValueDescriptor* e = v->enum_type()->FindValueByName(std::string(name));
      if (!e) return Status::Invalid("'{}' is not a value of enum {}", name, v->enum_type()->full_name());
      add ? r->AddEnum(m, v, e) : r->SetEnum(m, v, e);
      return Status::OK();
    }
    case pb::FieldDescriptor::CPPTYPE_STRING: {
      std::string_view s;
      RETURN_NOT_OK(View(a, i, &s));
      add ? r->AddString(m, v, std::string(s)) : r->SetString(m, v, std::string(s));
      return Status::OK();
    }
    case pb::FieldDescriptor::CPPTYPE_MESSAGE: {
      if (a.type_id() != arrow::Type::STRUCT || !message) {
        return Status::Invalid("column of type {} for a message", a.type()->ToString());
      }
      pb::Message* sm = add ? r->AddMessage(m, v) : r->MutableMessage(m, v);
      return SetMessage(*message, static_cast<const arrow::StructArray&>(a), i, sm, boxed);
    }
  }
  return Status::Internal("unhandled Protobuf type");
}

Status SetMessage(const Node& n, const arrow::StructArray& a, int64_t i, pb::Message* m, StructFields& boxed) {
  const auto& st = static_cast<const arrow::StructType&>(*a.type());
  const pb::Reflection* r = m->GetReflection();
  const auto& cols = boxed.IndexesByName(&n, st, n.fields, [](const auto& f) -> const std::string& {
    return f.fd->name();
  });
  for (size_t k = 0; k < n.fields.size(); ++k) {
    const auto& f = n.fields[k];
    const pb::FieldDescriptor* fd = f.fd;
    const int col = cols[k];
    if (col < 0) continue;  // a field older files lack: absent
    const arrow::Array& c = boxed.Field(a, col);
    if (c.IsNull(i)) continue;
    if (fd->is_map()) {
      if (c.type_id() != arrow::Type::MAP) return Status::Invalid("column '{}' is not a map", fd->name());
      const auto& ma = static_cast<const arrow::MapArray&>(c);
      const pb::FieldDescriptor* k = fd->message_type()->map_key();
      const pb::FieldDescriptor* v = fd->message_type()->map_value();
      for (int64_t j = ma.value_offset(i); j < ma.value_offset(i + 1); ++j) {
        pb::Message* entry = r->AddMessage(m, fd);
        RETURN_NOT_OK(SetValue(k, false, nullptr, *ma.keys(), j, boxed, entry));
        if (!ma.items()->IsNull(j)) RETURN_NOT_OK(SetValue(v, false, f.message.get(), *ma.items(), j, boxed, entry));
      }
    } else if (fd->is_repeated()) {
      int64_t begin = 0, end = 0;
      const arrow::Array* items = nullptr;
      if (c.type_id() == arrow::Type::LARGE_LIST) {
        const auto& la = static_cast<const arrow::LargeListArray&>(c);
        begin = la.value_offset(i), end = la.value_offset(i + 1), items = la.values().get();
      } else if (c.type_id() == arrow::Type::LIST) {
        const auto& la = static_cast<const arrow::ListArray&>(c);
        begin = la.value_offset(i), end = la.value_offset(i + 1), items = la.values().get();
      } else {
        return Status::Invalid("column '{}' is not a list", fd->name());
      }
      for (int64_t j = begin; j < end; ++j) {
        if (items->IsNull(j)) return Status::Invalid("column '{}': a null element", fd->name());
        RETURN_NOT_OK(SetValue(fd, true, f.message.get(), *items, j, boxed, m));
      }
    } else {
      RETURN_NOT_OK(SetValue(fd, false, f.message.get(), c, i, boxed, m));
    }
  }
  return Status::OK();
}

// One .proto text parsed and built into `pool` as file `name`.
Result<const pb::FileDescriptor*> BuildProto(std::string_view text, const std::string& name, pb::DescriptorPool* pool) {
  pb::io::ArrayInputStream in(text.data(), static_cast<int>(text.size()));
  TextErrors errors;
  pb::io::Tokenizer tokenizer(&in, &errors);
  pb::FileDescriptorProto proto;
  pb::compiler::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (!parser.Parse(&tokenizer, &proto) || !errors.first.empty()) {
    return Status::Invalid("{}", errors.first.empty() ? "cannot parse" : errors.first);
  }
  proto.set_name(name);
  PoolErrors pool_errors;
  const pb::FileDescriptor* file = pool->BuildFileCollectingErrors(proto, &pool_errors);
  if (!file) return Status::Invalid("{}", pool_errors.first);
  return file;
}

// The .proto text parsed into a pool over the generated one (the
// well-known types' imports resolve there), after the files it imports
// (its references, by their import paths).
Result<const pb::FileDescriptor*> ParseProto(std::string_view text, pb::DescriptorPool* pool,
                                             const SchemaReferences& references) {
  for (const auto& r : references) {
    if (pool->FindFileByName(r.name)) continue;  // a well-known type, or listed twice
    auto built = BuildProto(r.text, r.name, pool);
    if (!built.ok()) return Status::Invalid("Protobuf schema: the imported file '{}': {}", r.name, built.status().message());
  }
  auto file = BuildProto(text, "thaw_registry_value.proto", pool);
  if (!file.ok()) {
    const bool missing_import = file.status().message().find("has not been loaded") != std::string::npos;
    return Status::Invalid("Protobuf schema: {}{}", file.status().message(),
                           missing_import ? " (imports other than google/protobuf/*.proto come from the schema "
                                            "references, and the schema has none for it)"
                                          : "");
  }
  return *file;
}

Result<const pb::Descriptor*> ByIndexes(const pb::FileDescriptor* file, std::span<const int32_t> indexes) {
  if (indexes.empty()) return Status::Corrupt("Protobuf framing without message indexes");
  if (indexes[0] < 0 || indexes[0] >= file->message_type_count()) {
    return Status::Corrupt("message index {} is out of range ({} messages in the schema)", indexes[0],
                           file->message_type_count());
  }
  const pb::Descriptor* d = file->message_type(indexes[0]);
  for (size_t k = 1; k < indexes.size(); ++k) {
    if (indexes[k] < 0 || indexes[k] >= d->nested_type_count()) {
      return Status::Corrupt("nested message index {} is out of range in {}", indexes[k], d->full_name());
    }
    d = d->nested_type(indexes[k]);
  }
  return d;
}

std::vector<int32_t> IndexesOf(const pb::Descriptor* d) {
  std::vector<int32_t> out;
  for (; d; d = d->containing_type()) out.push_back(d->index());
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace

struct ProtobufValueSchema::Impl {
  std::unique_ptr<pb::DescriptorPool> pool;
  std::unique_ptr<pb::DynamicMessageFactory> factory;
  const pb::Descriptor* desc = nullptr;
  const pb::Message* prototype = nullptr;
  std::unique_ptr<Node> root;
};

ProtobufValueSchema::ProtobufValueSchema() : impl_(std::make_unique<Impl>()) {}
ProtobufValueSchema::~ProtobufValueSchema() = default;

const std::string& ProtobufValueSchema::message_name() const { return impl_->desc->full_name(); }

namespace {

// Parses, picks the message (by indexes or by name), and binds it to `table`
// (null: to its own standalone type, ids from first_field_id).
Result<std::shared_ptr<ProtobufValueSchema>> Build(std::shared_ptr<ProtobufValueSchema> s,
                                                   ProtobufValueSchema::Impl& impl, std::string_view text,
                                                   std::span<const int32_t> indexes, const std::string* name,
                                                   const TypePtr& table, int32_t first_field_id, TypePtr* type,
                                                   const SchemaReferences& references) {
  impl.pool = std::make_unique<pb::DescriptorPool>(pb::DescriptorPool::generated_pool());
  ASSIGN_OR_RAISE(const pb::FileDescriptor* file, ParseProto(text, impl.pool.get(), references));
  if (name) {
    impl.desc = impl.pool->FindMessageTypeByName(*name);
    if (!impl.desc || impl.desc->file() != file) {
      return Status::Invalid("Protobuf schema: no message '{}' in it", *name);
    }
  } else {
    ASSIGN_OR_RAISE(impl.desc, ByIndexes(file, indexes));
  }
  Mapper mapper(first_field_id);
  ASSIGN_OR_RAISE(TypePtr own, mapper.Message(impl.desc, ""));
  *type = table ? table : own;
  ASSIGN_OR_RAISE(impl.root, Bind(impl.desc, *own, **type, ""));
  impl.factory = std::make_unique<pb::DynamicMessageFactory>(impl.pool.get());
  impl.prototype = impl.factory->GetPrototype(impl.desc);
  if (!impl.prototype) return Status::Internal("no dynamic message for {}", impl.desc->full_name());
  return s;
}

}  // namespace

Result<std::shared_ptr<const ProtobufValueSchema>> ProtobufValueSchema::Make(std::string_view proto_text,
                                                                             std::span<const int32_t> message_indexes,
                                                                             int32_t first_field_id,
                                                                             const SchemaReferences& references) {
  std::shared_ptr<ProtobufValueSchema> s(new ProtobufValueSchema());
  ASSIGN_OR_RAISE(s, Build(s, *s->impl_, proto_text, message_indexes, nullptr, nullptr, first_field_id, &s->type_,
                           references));
  s->text_ = std::string(proto_text);
  s->indexes_ = IndexesOf(s->impl_->desc);
  ASSIGN_OR_RAISE(s->arrow_type_, parquet::ArrowTypeOf(*s->type_));
  return std::shared_ptr<const ProtobufValueSchema>(std::move(s));
}

Result<std::shared_ptr<const ProtobufValueSchema>> ProtobufValueSchema::Resolve(std::string_view proto_text,
                                                                                const std::string& message_name,
                                                                                const iceberg::TypePtr& table_type,
                                                                                const SchemaReferences& references) {
  if (!table_type || table_type->id != TypeId::kStruct) {
    return Status::Invalid("Protobuf value schema: the table's value column is not a struct");
  }
  std::shared_ptr<ProtobufValueSchema> s(new ProtobufValueSchema());
  ASSIGN_OR_RAISE(s, Build(s, *s->impl_, proto_text, {}, &message_name, table_type, 1, &s->type_, references));
  s->text_ = std::string(proto_text);
  s->indexes_ = IndexesOf(s->impl_->desc);
  ASSIGN_OR_RAISE(s->arrow_type_, parquet::ArrowTypeOf(*s->type_));
  return std::shared_ptr<const ProtobufValueSchema>(std::move(s));
}

Result<iceberg::TypePtr> ProtobufValueSchema::Evolve(const iceberg::TypePtr& table_type, std::string_view proto_text,
                                                     const std::string& message_name, int32_t* next_id,
                                                     const SchemaReferences& references) {
  pb::DescriptorPool pool(pb::DescriptorPool::generated_pool());
  ASSIGN_OR_RAISE(const pb::FileDescriptor* file, ParseProto(proto_text, &pool, references));
  const pb::Descriptor* d = pool.FindMessageTypeByName(message_name);
  if (!d || d->file() != file) return Status::Invalid("Protobuf schema: no message '{}' in it", message_name);
  Mapper mapper(1);
  ASSIGN_OR_RAISE(TypePtr own, mapper.Message(d, ""));
  return iceberg::UnionByName(*table_type, *own, next_id);
}

Result<std::vector<std::string>> ProtobufValueSchema::MessageNames(std::string_view proto_text,
                                                                  const SchemaReferences& references) {
  pb::DescriptorPool pool(pb::DescriptorPool::generated_pool());
  ASSIGN_OR_RAISE(const pb::FileDescriptor* file, ParseProto(proto_text, &pool, references));
  std::vector<std::string> names;
  for (int i = 0; i < file->message_type_count(); ++i) names.push_back(file->message_type(i)->full_name());
  return names;
}

Status ProtobufValueSchema::DecodeFramed(std::string_view value, arrow::StructBuilder* builder) const {
  ASSIGN_OR_RAISE(registry::Framing framing, registry::ParseFraming(value, /*protobuf=*/true));
  if (framing.message_indexes != indexes_) {
    return Status::Corrupt("Protobuf value of another message type (indexes differ from {}'s)", message_name());
  }
  std::unique_ptr<pb::Message> m(impl_->prototype->New());
  const std::string_view body = value.substr(framing.body_offset);
  if (!m->ParseFromArray(body.data(), static_cast<int>(body.size()))) {
    return Status::Corrupt("not a {} message ({} bytes)", message_name(), body.size());
  }
  RETURN_NOT_OK(Check(*impl_->root, *m, ""));
  return AppendMessage(*impl_->root, *m, builder);
}

Status ProtobufValueSchema::EncodeFramed(const arrow::StructArray& values, int64_t row, int32_t schema_id,
                                         std::string* out, StructFields* fields) const {
  if (row < 0 || row >= values.length() || values.IsNull(row)) {
    return Status::Invalid("Protobuf encode: no value struct in row {}", row);
  }
  std::unique_ptr<pb::Message> m(impl_->prototype->New());
  StructFields once;
  RETURN_NOT_OK(SetMessage(*impl_->root, values, row, m.get(), fields ? *fields : once).WithContext("Protobuf encode"));
  std::string body;
  {
    pb::io::StringOutputStream stream(&body);
    pb::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    if (!m->SerializeToCodedStream(&coded)) return Status::Invalid("Protobuf encode: the message does not serialize");
  }
  out->append(registry::Frame(schema_id, indexes_, /*protobuf=*/true, body));
  return Status::OK();
}

}  // namespace thaw::records

#include "thaw/archive/row_value.h"

#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>

#include <limits>
#include <nlohmann/json.hpp>

#include "thaw/iceberg/schema_json.h"
#include "thaw/parquet/arrow_status.h"
#include "thaw/parquet/arrow_type.h"
#include "thaw/records/json_row.h"
#include "thaw/records/layout.h"

namespace thaw::archive {

namespace {

using iceberg::NestedField;
using iceberg::Type;
using iceberg::TypeId;
using iceberg::TypePtr;
using Json = nlohmann::ordered_json;

// Deeper JSON than this becomes a string column (and value_raw).
constexpr int kMaxDepth = 32;

Status FromArrow(const arrow::Status& st) { return pq::FromArrow(st, "decoding a value"); }

// ---------------------------------------------------------------------------
// inference

struct Shape {
  enum Kind { kNone, kBool, kLong, kDouble, kString, kObject, kArray, kConflict };
  Kind kind = kNone;
  std::vector<std::pair<std::string, std::unique_ptr<Shape>>> fields;  // objects, first-seen order
  std::unique_ptr<Shape> element;                                      // arrays

  void Combine(Kind k) {
    if (kind == kNone || kind == k) {
      kind = k;
    } else if ((kind == kLong && k == kDouble) || (kind == kDouble && k == kLong)) {
      kind = kDouble;
    } else {
      kind = kConflict;
      fields.clear();
      element.reset();
    }
  }

  Shape* Field(const std::string& name) {
    for (auto& [n, s] : fields) {
      if (n == name) return s.get();
    }
    fields.emplace_back(name, std::make_unique<Shape>());
    return fields.back().second.get();
  }

  void Merge(const Json& v, int depth, bool top = false) {
    if (depth > kMaxDepth) {
      if (!v.is_null()) Combine(kConflict);
      return;
    }
    switch (v.type()) {
      case Json::value_t::null:
      case Json::value_t::discarded:
        return;
      case Json::value_t::boolean:
        return Combine(kBool);
      case Json::value_t::number_integer:
        return Combine(kLong);
      case Json::value_t::number_unsigned:
        return Combine(v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? kDouble
                                                                                                      : kLong);
      case Json::value_t::number_float:
        return Combine(kDouble);
      case Json::value_t::string:
      case Json::value_t::binary:
        return Combine(kString);
      case Json::value_t::object:
        Combine(kObject);
        if (kind != kObject) return;
        for (const auto& [k, item] : v.items()) {
          if (top && k.rfind("__", 0) == 0) continue;
          Field(k)->Merge(item, depth + 1);
        }
        return;
      case Json::value_t::array:
        Combine(kArray);
        if (kind != kArray) return;
        if (!element) element = std::make_unique<Shape>();
        for (const auto& item : v) element->Merge(item, depth + 1);
        return;
    }
  }
};

TypePtr Primitive(TypeId id) {
  auto t = std::make_shared<Type>();
  t->id = id;
  return t;
}

TypePtr ToType(const Shape& s, int32_t* next_id) {
  switch (s.kind) {
    case Shape::kBool:
      return Primitive(TypeId::kBoolean);
    case Shape::kLong:
      return Primitive(TypeId::kLong);
    case Shape::kDouble:
      return Primitive(TypeId::kDouble);
    case Shape::kObject: {
      if (s.fields.empty()) return Primitive(TypeId::kString);  // Parquet has no empty groups
      auto t = std::make_shared<Type>();
      t->id = TypeId::kStruct;
      for (const auto& [name, child] : s.fields) {
        NestedField f;
        f.id = (*next_id)++;
        f.name = name;
        f.required = false;
        f.type = ToType(*child, next_id);
        t->fields.push_back(std::move(f));
      }
      return t;
    }
    case Shape::kArray: {
      auto t = std::make_shared<Type>();
      t->id = TypeId::kList;
      NestedField e;
      e.id = (*next_id)++;
      e.name = "element";
      e.required = false;
      static const Shape kNothing;
      e.type = ToType(s.element ? *s.element : kNothing, next_id);
      t->fields.push_back(std::move(e));
      return t;
    }
    default:  // only nulls, conflicts
      return Primitive(TypeId::kString);
  }
}

// ---------------------------------------------------------------------------
// decoding

Status CheckJsonType(const Type& t, const std::string& where) {
  switch (t.id) {
    case TypeId::kBoolean:
    case TypeId::kLong:
    case TypeId::kDouble:
    case TypeId::kString:
      return Status::OK();
    case TypeId::kStruct:
      if (t.fields.empty()) return Status::Invalid("value field '{}' is an empty struct", where);
      for (const auto& f : t.fields) {
        RETURN_NOT_OK(CheckJsonType(*f.type, where.empty() ? f.name : where + "." + f.name));
      }
      return Status::OK();
    case TypeId::kList:
      return CheckJsonType(*t.fields.at(0).type, where + ".element");
    default:
      return Status::Unsupported(
          "value field '{}' has type {}: the JSON row writer fills boolean, long, double, string, struct and list "
          "fields only (docs/layouts.md, thaw-row)",
          where, t.ToString());
  }
}

class JsonValueCodec : public ValueCodec {
 public:
  explicit JsonValueCodec(TypePtr type) : type_(std::move(type)) {
    layout_.name = "thaw-row";
    layout_.value_json = {records::ColumnPath{{kValueFieldId}, {"value"}, type_}};
    layout_.value_json_unwrap = true;
  }

  Status Init() {
    ASSIGN_OR_RAISE(arrow_type_, parquet::ArrowTypeOf(*type_));
    return Status::OK();
  }

  std::string format() const override { return "json"; }
  const TypePtr& value_type() const override { return type_; }

  Result<bool> Decode(std::string_view bytes, arrow::StructBuilder* builder) override {
    bool appended = false;
    RETURN_NOT_OK(records::AppendJsonObject(*type_, bytes, builder, &appended));
    return appended;
  }

  Status BindEncoder(const std::shared_ptr<arrow::Array>& values,
                     const std::vector<std::optional<int32_t>>&) override {
    auto schema = arrow::schema({arrow::field("value", arrow_type_, true, parquet::FieldIdMetadata(kValueFieldId))});
    batch_ = arrow::RecordBatch::Make(schema, values->length(), {values});
    ASSIGN_OR_RAISE(encoder_, records::JsonRowBuilder::Bind(layout_, *batch_));
    return Status::OK();
  }

  bool Encode(int64_t row, std::string* out) override { return encoder_.Append(row, out); }

 private:
  TypePtr type_;
  std::shared_ptr<arrow::DataType> arrow_type_;
  records::Layout layout_;
  std::shared_ptr<arrow::RecordBatch> batch_;
  records::JsonRowBuilder encoder_;
};

}  // namespace

Result<std::unique_ptr<ValueCodec>> MakeJsonValueCodec(iceberg::TypePtr value_type) {
  if (!value_type || value_type->id != TypeId::kStruct) {
    return Status::Invalid("the row layout's value column (field id {}) must be a struct", kValueFieldId);
  }
  RETURN_NOT_OK(CheckJsonType(*value_type, ""));
  auto c = std::make_unique<JsonValueCodec>(std::move(value_type));
  RETURN_NOT_OK(c->Init());
  return std::unique_ptr<ValueCodec>(std::move(c));
}

Result<std::unique_ptr<ValueCodec>> MakeValueCodec(const std::string& format, iceberg::TypePtr value_type,
                                                   const std::map<std::string, std::string>& properties) {
  if (format == "json") return MakeJsonValueCodec(std::move(value_type));
  return Status::Unsupported("{}={}: archive writes row tables of JSON values only so far", kValueFormatKey, format);
}

Result<iceberg::TypePtr> InferJsonValueType(const std::vector<std::string_view>& samples) {
  Shape top;
  top.kind = Shape::kObject;
  size_t objects = 0;
  for (std::string_view s : samples) {
    Json v = Json::parse(s.begin(), s.end(), nullptr, /*allow_exceptions=*/false);
    if (v.is_discarded() || !v.is_object()) continue;
    ++objects;
    top.Merge(v, 0, /*top=*/true);
  }
  if (top.fields.empty()) {
    return Status::NotFound(
        "none of the first {} values is a JSON object with a field ({} objects): the row layout needs JSON object "
        "values to infer columns from; archive this topic with --layout thaw",
        samples.size(), objects);
  }
  int32_t next_id = kFirstValueFieldId;
  return ToType(top, &next_id);
}

std::string RowSchemaJson(bool with_topic, const iceberg::Type& value_type, bool with_schema_id, int32_t schema_id,
                          const iceberg::Type* key_type) {
  nlohmann::ordered_json schema = nlohmann::ordered_json::parse(parquet::CanonicalSchemaJson(with_topic));
  for (auto& f : schema["fields"]) {
    if (f["id"] == kValueRawFieldId) f["name"] = "value_raw";
  }
  auto add = [&](int32_t id, const char* name, nlohmann::ordered_json type) {
    nlohmann::ordered_json f;
    f["id"] = id;
    f["name"] = name;
    f["required"] = false;
    f["type"] = std::move(type);
    schema["fields"].push_back(std::move(f));
  };
  add(kValueFieldId, "value", iceberg::TypeToJson(value_type));
  if (with_schema_id) add(kValueSchemaIdFieldId, "value_schema_id", "int");
  if (key_type) {
    add(kKeyDecodedFieldId, "key_decoded", iceberg::TypeToJson(*key_type));
    add(kKeySchemaIdFieldId, "key_schema_id", "int");
  }
  schema["schema-id"] = schema_id;
  return schema.dump();
}

namespace {

Result<std::unique_ptr<arrow::StructBuilder>> StructBuilderOf(const ValueCodec& codec) {
  ASSIGN_OR_RAISE(auto type, parquet::ArrowTypeOf(*codec.value_type()));
  std::unique_ptr<arrow::ArrayBuilder> b;
  RETURN_NOT_OK(FromArrow(arrow::MakeBuilder(arrow::default_memory_pool(), type, &b)));
  return std::unique_ptr<arrow::StructBuilder>(static_cast<arrow::StructBuilder*>(b.release()));
}

}  // namespace

Result<std::unique_ptr<RowValueDecoder>> RowValueDecoder::Make(std::unique_ptr<ValueCodec> codec,
                                                               std::unique_ptr<ValueCodec> key_codec) {
  std::unique_ptr<RowValueDecoder> d(new RowValueDecoder());
  ASSIGN_OR_RAISE(d->builder_, StructBuilderOf(*codec));
  d->codec_ = std::move(codec);
  if (key_codec) {
    ASSIGN_OR_RAISE(d->key_builder_, StructBuilderOf(*key_codec));
    d->key_codec_ = std::move(key_codec);
  }
  return d;
}

RowValueDecoder::~RowValueDecoder() = default;

Result<parquet::DecodedValues> RowValueDecoder::Decode(const records::RecordBatch& batch, size_t begin, size_t end) {
  end = std::min(end, batch.records.size());
  parquet::DecodedValues out;
  std::vector<bool> decoded;
  for (size_t i = begin; i < end; ++i) {
    const auto& v = batch.records[i].value;
    bool ok = false;
    if (v) {
      ASSIGN_OR_RAISE(ok, codec_->Decode(*v, builder_.get()));
      if (!ok) ++counts_.undecodable;
    }
    if (!ok) RETURN_NOT_OK(FromArrow(builder_->AppendNull()));
    decoded.push_back(ok);
    out.keep_raw.push_back(v && !ok);
    out.schema_ids.push_back(ok ? codec_->SchemaId(*v) : std::nullopt);
    if (key_codec_) {
      const auto& key = batch.records[i].key;
      bool key_ok = false;
      if (key) {
        ASSIGN_OR_RAISE(key_ok, key_codec_->Decode(*key, key_builder_.get()));
        ++(key_ok ? counts_.keys_decoded : counts_.keys_undecodable);
      }
      if (!key_ok) RETURN_NOT_OK(FromArrow(key_builder_->AppendNull()));
      out.key_schema_ids.push_back(key_ok ? key_codec_->SchemaId(*key) : std::nullopt);
    }
  }
  if (key_codec_) RETURN_NOT_OK(FromArrow(key_builder_->Finish(&out.keys)));
  RETURN_NOT_OK(FromArrow(builder_->Finish(&out.values)));
  RETURN_NOT_OK(codec_->BindEncoder(out.values, out.schema_ids));
  for (size_t k = 0; k < decoded.size(); ++k) {
    if (!decoded[k]) continue;
    ++counts_.decoded;
    scratch_.clear();
    const bool some = codec_->Encode(static_cast<int64_t>(k), &scratch_);
    if (!some || scratch_ != *batch.records[begin + k].value) out.keep_raw[k] = true;
  }
  for (bool raw : out.keep_raw) counts_.kept_raw += raw;
  return out;
}

}  // namespace thaw::archive

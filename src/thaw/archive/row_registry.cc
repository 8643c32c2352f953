#include "thaw/archive/row_registry.h"

#include <arrow/array.h>
#include <arrow/builder.h>

#include <utility>

#include <nlohmann/json.hpp>

#include "thaw/common/log.h"
#include "thaw/records/avro_value.h"
#include "thaw/records/json_schema_value.h"
#include "thaw/records/protobuf_value.h"
#include "thaw/registry/client.h"
#include "thaw/records/struct_fields.h"

namespace thaw::archive {

std::map<std::string, std::string> RegistryValueType::properties() const {
  std::map<std::string, std::string> p{{key ? kKeyFormatKey : kValueFormatKey, format},
                                       {key ? kKeySchemasKey : kValueSchemasKey, "registry"}};
  if (format == "protobuf") p[key ? kKeyProtoMessageKey : kProtoMessageKey] = message_name;
  return p;
}

std::string AvroKeyRecordText(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.value("type", nlohmann::json()) == "record") return text;
  if (j.is_discarded()) return text;  // the codec names what is wrong with it
  // No namespace: names inside resolve as they did at the top level.
  nlohmann::ordered_json wrapper;
  wrapper["type"] = "record";
  wrapper["name"] = "thaw_key_record";
  wrapper["fields"] = nlohmann::ordered_json::array({{{"name", "key"}, {"type", j}}});
  return wrapper.dump();
}

RegistrySchemas::RegistrySchemas(std::shared_ptr<registry::SchemaRegistry> registry, iceberg::TypePtr value_type,
                                 std::string format, std::string message_name, bool key)
    : registry_(std::move(registry)),
      value_type_(std::move(value_type)),
      format_(std::move(format)),
      message_name_(std::move(message_name)),
      key_(key) {}

std::string RegistrySchemas::CodecText(const std::string& text) const {
  return key_ && format_ == "avro" ? AvroKeyRecordText(text) : text;
}

Result<iceberg::TypePtr> RegistrySchemas::EvolveText(const std::string& text, const records::SchemaReferences& refs,
                                                      int32_t* next_id) const {
  if (format_ == "protobuf") {
    return records::ProtobufValueSchema::Evolve(value_type_, text, message_name_, next_id, refs);
  }
  if (format_ == "json-schema") return records::JsonSchemaValue::Evolve(value_type_, text, next_id, refs);
  return records::AvroValueSchema::Evolve(value_type_, CodecText(text), next_id, refs);
}

void RegistrySchemas::KeepProperties(int32_t id, const std::string& text, const records::SchemaReferences& refs) {
  texts_[id] = text;
  refs_[id] = refs;
  new_properties_[PropertyKey(id)] = text;
  if (!refs.empty()) new_properties_[records::ReferencesPropertyKey(id, key_)] = records::ReferencesToJson(refs);
}

Status RegistrySchemas::Load(const std::map<std::string, std::string>& table_properties) {
  ASSIGN_OR_RAISE(auto texts, records::SchemaTextsById(table_properties, format_, key_));
  ASSIGN_OR_RAISE(auto refs, records::ReferencesById(table_properties, key_));
  for (const auto& [id, text] : texts) {
    auto s = ResolveText(text, refs[id], value_type_);
    if (!s.ok()) {
      log::Debug("table property {} does not resolve against the table's {} columns yet: {}", PropertyKey(id),
                 role(), s.status().message());
      continue;
    }
    std::lock_guard<std::mutex> lock(mu_);
    texts_[id] = text;
    refs_[id] = refs[id];
    resolved_[id] = *s;
  }
  return Status::OK();
}

namespace {

// The schema of `id` and the schemas it refers to, when the registry has
// them; an empty text with *why when not (an unknown id or reference).
Result<registry::Schema> Fetch(registry::SchemaRegistry& registry, int32_t id, records::SchemaReferences* refs,
                               std::string* why) {
  auto schema = registry.SchemaById(id);
  if (!schema.ok()) {
    if (schema.status().code() == StatusCode::kNotFound) {
      *why = fmt::format("schema id {} is unknown to the registry ({})", id, schema.status().message());
      return registry::Schema{};
    }
    return schema.status().WithContext(fmt::format("fetching schema id {} from the schema registry", id));
  }
  if (schema->references.empty()) return *schema;
  auto resolved = registry.ResolveReferences(*schema);
  if (!resolved.ok()) {
    if (resolved.status().code() == StatusCode::kNotFound || resolved.status().code() == StatusCode::kInvalidArgument) {
      *why = fmt::format("schema id {}: {}", id, resolved.status().message());
      return registry::Schema{};
    }
    return resolved.status().WithContext(fmt::format("schema id {}", id));
  }
  *refs = std::move(*resolved);
  return *schema;
}

std::string FormatOf(registry::SchemaType t) {
  switch (t) {
    case registry::SchemaType::kProtobuf: return "protobuf";
    case registry::SchemaType::kJson: return "json-schema";
    default: return "avro";
  }
}

}  // namespace

Result<RegistryValueType> RegistrySchemas::NewTableType(registry::SchemaRegistry& registry, int32_t id,
                                                        std::string_view value, int32_t first_field_id, bool key) {
  std::string why;
  records::SchemaReferences refs;
  ASSIGN_OR_RAISE(registry::Schema schema, Fetch(registry, id, &refs, &why));
  if (schema.text.empty()) return Status::Unsupported("{}", why);
  RegistryValueType out;
  out.key = key;
  out.format = FormatOf(schema.type);
  if (schema.type == registry::SchemaType::kProtobuf) {
    auto framing = registry::ParseFraming(value, /*protobuf=*/true);
    if (!framing.ok()) return Status::Unsupported("schema id {}: {}", id, framing.status().message());
    auto s = records::ProtobufValueSchema::Make(schema.text, framing->message_indexes, first_field_id, refs);
    if (!s.ok()) return Status::Unsupported("schema id {}: {}", id, s.status().message());
    out.type = (*s)->iceberg_type();
    out.message_name = (*s)->message_name();
    return out;
  }
  if (schema.type == registry::SchemaType::kJson) {
    auto s = records::JsonSchemaValue::Make(schema.text, first_field_id, refs);
    if (!s.ok()) return Status::Unsupported("schema id {}: {}", id, s.status().message());
    out.type = (*s)->iceberg_type();
    return out;
  }
  auto s = records::AvroValueSchema::Make(key ? AvroKeyRecordText(schema.text) : schema.text, first_field_id, refs);
  if (!s.ok()) return Status::Unsupported("schema id {}: {}", id, s.status().message());
  out.type = (*s)->iceberg_type();
  return out;
}

Result<RegistrySchemas::Outcome> RegistrySchemas::Prepare(int32_t id, int32_t next_field_id,
                                                          iceberg::TypePtr* evolved, std::string* why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (resolved_.count(id) || refused_.count(id)) return Outcome::kKnown;
  }
  records::SchemaReferences refs;
  ASSIGN_OR_RAISE(registry::Schema schema, Fetch(*registry_, id, &refs, why));
  auto refuse = [&](std::string reason) {
    *why = std::move(reason);
    std::lock_guard<std::mutex> lock(mu_);
    refused_[id] = *why;
    return Outcome::kRefused;
  };
  if (schema.text.empty()) return refuse(*why);
  if (FormatOf(schema.type) != format_) {
    return refuse(fmt::format("schema id {} is {}, but the table holds {} {}s", id,
                              registry::SchemaTypeName(schema.type), format_, role()));
  }
  const std::string& text = schema.text;
  auto resolved = ResolveText(text, refs, value_type_);
  if (resolved.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    resolved_[id] = *resolved;
    KeepProperties(id, text, refs);
    return Outcome::kReady;
  }
  if (resolved.status().code() != StatusCode::kNotFound) {
    return refuse(fmt::format("schema id {} does not fit the table: {}", id, resolved.status().message()));
  }
  int32_t next = next_field_id;
  auto grown = EvolveText(text, refs, &next);
  if (!grown.ok()) return refuse(fmt::format("schema id {}: {}", id, grown.status().message()));
  if (auto check = ResolveText(text, refs, *grown); !check.ok()) {
    return refuse(fmt::format("schema id {} cannot evolve the table: {}", id, check.status().message()));
  }
  // Every schema the table already holds must still read the evolved
  // columns (a widening one format's codec does not share would strand
  // their rows): else the table is left as it is.
  std::map<int32_t, std::string> texts;
  std::map<int32_t, records::SchemaReferences> all_refs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    texts = texts_;
    all_refs = refs_;
  }
  for (const auto& [old_id, old_text] : texts) {
    if (auto check = ResolveText(old_text, all_refs[old_id], *grown); !check.ok()) {
      return refuse(fmt::format("schema id {} would evolve the table into columns schema id {} cannot read: {}", id,
                                old_id, check.status().message()));
    }
  }
  *evolved = *grown;
  // Known once the evolution commit lands (SetValueType re-resolves it).
  std::lock_guard<std::mutex> lock(mu_);
  KeepProperties(id, text, refs);
  return Outcome::kEvolve;
}

Status RegistrySchemas::SetValueType(iceberg::TypePtr value_type) {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<int32_t, std::shared_ptr<const records::FramedValueCodec>> next;
  for (const auto& [id, text] : texts_) {
    auto s = ResolveText(text, refs_[id], value_type);
    if (!s.ok()) return s.status().WithContext(fmt::format("schema id {} after evolving the table", id));
    next[id] = *s;
  }
  resolved_ = std::move(next);
  value_type_ = std::move(value_type);
  return Status::OK();
}

std::shared_ptr<const records::FramedValueCodec> RegistrySchemas::Get(int32_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = resolved_.find(id);
  return it == resolved_.end() ? nullptr : it->second;
}

std::map<std::string, std::string> RegistrySchemas::TakeNewProperties() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(new_properties_, {});
}

namespace {

class RegistryCodec : public ValueCodec {
 public:
  explicit RegistryCodec(std::shared_ptr<const RegistrySchemas> schemas)
      : schemas_(std::move(schemas)), type_(schemas_->value_type()) {}

  std::string format() const override { return "registry"; }
  const iceberg::TypePtr& value_type() const override { return type_; }

  std::optional<int32_t> SchemaId(std::string_view bytes) const override { return records::ConfluentSchemaId(bytes); }

  Result<bool> Decode(std::string_view bytes, arrow::StructBuilder* builder) override {
    auto id = records::ConfluentSchemaId(bytes);
    if (!id) return false;
    auto schema = Lookup(*id);
    if (!schema) return false;
    Status st = schema->DecodeFramed(bytes, builder);
    if (st.code() == StatusCode::kCorrupt) return false;
    RETURN_NOT_OK(st);
    return true;
  }

  Status BindEncoder(const std::shared_ptr<arrow::Array>& values,
                     const std::vector<std::optional<int32_t>>& schema_ids) override {
    if (!values || values->type_id() != arrow::Type::STRUCT) {
      return Status::Internal("the registry value codec needs a struct array");
    }
    values_ = std::static_pointer_cast<arrow::StructArray>(values);
    fields_ = std::make_unique<records::StructFields>();  // this column's children, across its rows
    ids_ = schema_ids;
    return Status::OK();
  }

  bool Encode(int64_t row, std::string* out) override {
    if (!values_ || values_->IsNull(row) || static_cast<size_t>(row) >= ids_.size() || !ids_[row]) return false;
    auto schema = Lookup(*ids_[row]);
    return schema && schema->EncodeFramed(*values_, row, *ids_[row], out, fields_.get()).ok();
  }

 private:
  // A small per-codec cache: writer threads look up the same few ids.
  std::shared_ptr<const records::FramedValueCodec> Lookup(int32_t id) {
    if (id == last_id_ && last_) return last_;
    last_ = schemas_->Get(id);
    last_id_ = id;
    return last_;
  }

  std::shared_ptr<const RegistrySchemas> schemas_;
  iceberg::TypePtr type_;  // as when made: an evolution makes new codecs
  std::shared_ptr<arrow::StructArray> values_;
  std::unique_ptr<records::StructFields> fields_;
  std::vector<std::optional<int32_t>> ids_;
  int32_t last_id_ = -1;
  std::shared_ptr<const records::FramedValueCodec> last_;
};

}  // namespace

std::unique_ptr<ValueCodec> MakeRegistryCodec(std::shared_ptr<const RegistrySchemas> schemas) {
  return std::make_unique<RegistryCodec>(std::move(schemas));
}

}  // namespace thaw::archive

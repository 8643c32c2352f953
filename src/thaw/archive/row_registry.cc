#include "thaw/archive/row_registry.h"

#include <arrow/array.h>
#include <arrow/builder.h>

#include <charconv>
#include <utility>

#include "thaw/common/log.h"
#include "thaw/registry/client.h"

namespace thaw::archive {

RegistrySchemas::RegistrySchemas(std::shared_ptr<registry::SchemaRegistry> registry, iceberg::TypePtr value_type)
    : registry_(std::move(registry)), value_type_(std::move(value_type)) {}

Status RegistrySchemas::Load(const std::map<std::string, std::string>& table_properties) {
  const std::string prefix = kAvroSchemaByIdPrefix;
  for (const auto& [key, text] : table_properties) {
    if (key.rfind(prefix, 0) != 0) continue;
    int32_t id = 0;
    const std::string digits = key.substr(prefix.size());
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
    if (ec != std::errc() || end != digits.data() + digits.size()) {
      return Status::Invalid("table property {}: '{}' is not a schema id", key, digits);
    }
    auto s = records::AvroValueSchema::Resolve(text, value_type_);
    if (!s.ok()) return s.status().WithContext(fmt::format("table property {}", key));
    std::lock_guard<std::mutex> lock(mu_);
    texts_[id] = text;
    resolved_[id] = *s;
  }
  return Status::OK();
}

Result<std::string> RegistrySchemas::FetchAvroText(int32_t id, std::string* why) {
  auto schema = registry_->SchemaById(id);
  if (!schema.ok()) {
    if (schema.status().code() == StatusCode::kNotFound) {
      *why = fmt::format("schema id {} is unknown to the registry ({})", id, schema.status().message());
      return std::string();
    }
    return schema.status().WithContext(fmt::format("fetching schema id {} from the schema registry", id));
  }
  if (schema->type != registry::SchemaType::kAvro) {
    *why = fmt::format(
        "schema id {} is {}: archive decodes Avro values through the registry so far (Protobuf and JSON Schema "
        "values are kept as bytes)",
        id, registry::SchemaTypeName(schema->type));
    return std::string();
  }
  if (!schema->references.empty()) {
    *why = fmt::format("schema id {} refers to {} other schema(s) ('{}'…): references are not resolved yet", id,
                       schema->references.size(), schema->references.front().subject);
    return std::string();
  }
  return schema->text;
}

Result<std::shared_ptr<const records::AvroValueSchema>> RegistrySchemas::FetchStandalone(int32_t id,
                                                                                          int32_t first_field_id) {
  std::string why;
  ASSIGN_OR_RAISE(std::string text, FetchAvroText(id, &why));
  if (text.empty()) return Status::Unsupported("{}", why);
  auto s = records::AvroValueSchema::Make(text, first_field_id);
  if (!s.ok()) return s.status().WithContext(fmt::format("schema id {}", id));
  return *s;
}

Result<RegistrySchemas::Outcome> RegistrySchemas::Prepare(int32_t id, int32_t next_field_id,
                                                          iceberg::TypePtr* evolved, std::string* why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (resolved_.count(id) || refused_.count(id)) return Outcome::kKnown;
  }
  ASSIGN_OR_RAISE(std::string text, FetchAvroText(id, why));
  auto refuse = [&](std::string reason) {
    *why = std::move(reason);
    std::lock_guard<std::mutex> lock(mu_);
    refused_[id] = *why;
    return Outcome::kRefused;
  };
  if (text.empty()) return refuse(*why);
  auto resolved = records::AvroValueSchema::Resolve(text, value_type_);
  if (resolved.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    texts_[id] = text;
    resolved_[id] = *resolved;
    new_properties_[kAvroSchemaByIdPrefix + std::to_string(id)] = text;
    return Outcome::kReady;
  }
  if (resolved.status().code() != StatusCode::kNotFound) {
    return refuse(fmt::format("schema id {} does not fit the table: {}", id, resolved.status().message()));
  }
  int32_t next = next_field_id;
  auto grown = records::AvroValueSchema::Evolve(value_type_, text, &next);
  if (!grown.ok()) return refuse(fmt::format("schema id {}: {}", id, grown.status().message()));
  auto check = records::AvroValueSchema::Resolve(text, *grown);
  if (!check.ok()) {
    return refuse(fmt::format("schema id {} cannot evolve the table: {}", id, check.status().message()));
  }
  *evolved = *grown;
  // Known once the evolution commit lands (SetValueType re-resolves it).
  std::lock_guard<std::mutex> lock(mu_);
  texts_[id] = text;
  new_properties_[kAvroSchemaByIdPrefix + std::to_string(id)] = text;
  return Outcome::kEvolve;
}

Status RegistrySchemas::SetValueType(iceberg::TypePtr value_type) {
  std::map<int32_t, std::shared_ptr<const records::AvroValueSchema>> next;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [id, text] : texts_) {
    auto s = records::AvroValueSchema::Resolve(text, value_type);
    if (!s.ok()) return s.status().WithContext(fmt::format("schema id {} after evolving the table", id));
    next[id] = *s;
  }
  resolved_ = std::move(next);
  value_type_ = std::move(value_type);
  return Status::OK();
}

std::shared_ptr<const records::AvroValueSchema> RegistrySchemas::Get(int32_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = resolved_.find(id);
  return it == resolved_.end() ? nullptr : it->second;
}

std::map<std::string, std::string> RegistrySchemas::TakeNewProperties() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(new_properties_, {});
}

namespace {

class RegistryAvroCodec : public ValueCodec {
 public:
  explicit RegistryAvroCodec(std::shared_ptr<const RegistrySchemas> schemas)
      : schemas_(std::move(schemas)), type_(schemas_->value_type()) {}

  std::string format() const override { return "avro"; }
  const iceberg::TypePtr& value_type() const override { return type_; }

  std::optional<int32_t> SchemaId(std::string_view bytes) const override { return records::ConfluentSchemaId(bytes); }

  Result<bool> Decode(std::string_view bytes, arrow::StructBuilder* builder) override {
    auto id = records::ConfluentSchemaId(bytes);
    if (!id) return false;
    auto schema = Lookup(*id);
    if (!schema) return false;
    Status st = schema->Decode(bytes, /*framed=*/true, builder);
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
    ids_ = schema_ids;
    return Status::OK();
  }

  bool Encode(int64_t row, std::string* out) override {
    if (!values_ || values_->IsNull(row) || static_cast<size_t>(row) >= ids_.size() || !ids_[row]) return false;
    auto schema = Lookup(*ids_[row]);
    return schema && schema->Encode(*values_, row, ids_[row], out).ok();
  }

 private:
  // A small per-codec cache: writer threads look up the same few ids.
  std::shared_ptr<const records::AvroValueSchema> Lookup(int32_t id) {
    if (id == last_id_ && last_) return last_;
    last_ = schemas_->Get(id);
    last_id_ = id;
    return last_;
  }

  std::shared_ptr<const RegistrySchemas> schemas_;
  iceberg::TypePtr type_;  // as when made: an evolution makes new codecs
  std::shared_ptr<arrow::StructArray> values_;
  std::vector<std::optional<int32_t>> ids_;
  int32_t last_id_ = -1;
  std::shared_ptr<const records::AvroValueSchema> last_;
};

}  // namespace

std::unique_ptr<ValueCodec> MakeRegistryAvroCodec(std::shared_ptr<const RegistrySchemas> schemas) {
  return std::make_unique<RegistryAvroCodec>(std::move(schemas));
}

}  // namespace thaw::archive

#include "thaw/records/framed_value.h"

#include <charconv>

#include "thaw/records/avro_value.h"
#include "thaw/records/json_schema_value.h"
#include "thaw/records/protobuf_value.h"

namespace thaw::records {

std::string_view SchemaPropertyPrefix(std::string_view format) {
  if (format == "protobuf") return "thaw.row.proto-schema.";
  if (format == "json-schema") return "thaw.row.json-schema.";
  return "thaw.row.avro-schema.";
}

Result<std::map<int32_t, std::string>> SchemaTextsById(const std::map<std::string, std::string>& properties,
                                                       std::string_view format) {
  const std::string_view prefix = SchemaPropertyPrefix(format);
  std::map<int32_t, std::string> out;
  for (const auto& [key, text] : properties) {
    if (key.rfind(prefix, 0) != 0) continue;
    const std::string_view digits = std::string_view(key).substr(prefix.size());
    int32_t id = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
    if (ec != std::errc() || end != digits.data() + digits.size()) {
      return Status::Corrupt("table property {}: '{}' is not a schema id", key, digits);
    }
    out.emplace(id, text);
  }
  return out;
}

Result<std::shared_ptr<const FramedValueCodec>> ResolveFramed(std::string_view format, const std::string& text,
                                                              const std::string& message_name,
                                                              const iceberg::TypePtr& value_type,
                                                              const SchemaReferences& references) {
  if (format == "protobuf") {
    ASSIGN_OR_RAISE(auto s, ProtobufValueSchema::Resolve(text, message_name, value_type, references));
    return std::shared_ptr<const FramedValueCodec>(std::move(s));
  }
  if (format == "json-schema") {
    ASSIGN_OR_RAISE(auto s, JsonSchemaValue::Resolve(text, value_type, references));
    return std::shared_ptr<const FramedValueCodec>(std::move(s));
  }
  ASSIGN_OR_RAISE(auto s, AvroValueSchema::Resolve(text, value_type, references));
  return AvroFramed(std::move(s));
}

}  // namespace thaw::records

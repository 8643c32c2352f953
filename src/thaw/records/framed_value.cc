#include "thaw/records/framed_value.h"

#include "thaw/records/avro_value.h"
#include "thaw/records/json_schema_value.h"
#include "thaw/records/protobuf_value.h"

namespace thaw::records {

std::string_view SchemaPropertyPrefix(std::string_view format, bool key) {
  if (format == "protobuf") return key ? "thaw.row.key-proto-schema." : "thaw.row.proto-schema.";
  if (format == "json-schema") return key ? "thaw.row.key-json-schema." : "thaw.row.json-schema.";
  return key ? "thaw.row.key-avro-schema." : "thaw.row.avro-schema.";
}

Result<std::map<int32_t, std::string>> SchemaTextsById(const std::map<std::string, std::string>& properties,
                                                       std::string_view format, bool key) {
  const std::string_view prefix = SchemaPropertyPrefix(format, key);
  std::map<int32_t, std::string> out;
  for (const auto& [key, text] : properties) {
    if (key.rfind(prefix, 0) != 0) continue;
    ASSIGN_OR_RAISE(const int32_t id, SchemaIdOfProperty(key, prefix));
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

#include "thaw/registry/wire.h"

#include <limits>
#include <nlohmann/json.hpp>

#include "thaw/common/json_read.h"

namespace thaw::registry {

namespace {

using Json = nlohmann::json;

using json::Excerpt;
using json::Member;

Result<std::string> RequiredString(const Json& j, std::string_view key, std::string_view what) {
  const Json* v = Member(j, key);
  if (v == nullptr) return Status::Corrupt("{}: the response has no '{}'", what, key);
  if (!v->is_string()) return Status::Corrupt("{}: '{}' is not a string but {}", what, key, Excerpt(*v));
  return v->get<std::string>();
}

Result<int32_t> RequiredInt32(const Json& j, std::string_view key, std::string_view what) {
  const Json* v = Member(j, key);
  if (v == nullptr) return Status::Corrupt("{}: the response has no '{}'", what, key);
  if (!v->is_number_integer()) return Status::Corrupt("{}: '{}' is not an integer but {}", what, key, Excerpt(*v));
  if (v->is_number_unsigned()) {
    auto u = v->get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
      return Status::Corrupt("{}: '{}' = {} is out of range (a 32-bit id or version)", what, key, u);
    }
    return static_cast<int32_t>(u);
  }
  auto i = v->get<int64_t>();
  if (i < std::numeric_limits<int32_t>::min() || i > std::numeric_limits<int32_t>::max()) {
    return Status::Corrupt("{}: '{}' = {} is out of range (a 32-bit id or version)", what, key, i);
  }
  return static_cast<int32_t>(i);
}

// schemaType, references and schema of a schema-bearing response.
Result<Schema> SchemaOf(const Json& j, std::string_view what) {
  Schema out;
  ASSIGN_OR_RAISE(out.text, RequiredString(j, "schema", what));
  const Json* type = Member(j, "schemaType");
  if (type != nullptr && !type->is_null()) {
    if (!type->is_string()) return Status::Corrupt("{}: 'schemaType' is not a string but {}", what, Excerpt(*type));
    auto parsed = ParseSchemaType(type->get_ref<const std::string&>());
    if (!parsed.ok()) return parsed.status().WithContext(what);
    out.type = *parsed;
  }
  const Json* refs = Member(j, "references");
  if (refs != nullptr && !refs->is_null()) {
    if (!refs->is_array()) return Status::Corrupt("{}: 'references' is not a list but {}", what, Excerpt(*refs));
    for (const auto& r : *refs) {
      if (!r.is_object()) return Status::Corrupt("{}: a reference is not an object but {}", what, Excerpt(r));
      SchemaReference ref;
      ASSIGN_OR_RAISE(ref.name, RequiredString(r, "name", what));
      ASSIGN_OR_RAISE(ref.subject, RequiredString(r, "subject", what));
      ASSIGN_OR_RAISE(ref.version, RequiredInt32(r, "version", what));
      out.references.push_back(std::move(ref));
    }
  }
  return out;
}

// Zigzag varint of a 32-bit value (Confluent's ByteUtils.readVarint).
Result<int32_t> ReadZigzagVarint(std::span<const uint8_t> bytes, size_t* pos) {
  uint32_t raw = 0;
  for (int shift = 0; shift < 35; shift += 7) {
    if (*pos >= bytes.size()) {
      return Status::Corrupt("a framed Protobuf value ends inside its message indexes (at byte {})", *pos);
    }
    uint8_t b = bytes[(*pos)++];
    if (shift == 28 && (b & 0xf0) != 0) {
      return Status::Corrupt("a message index varint at byte {} does not fit in 32 bits", *pos - 1);
    }
    raw |= static_cast<uint32_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return static_cast<int32_t>((raw >> 1) ^ (~(raw & 1) + 1));
  }
  return Status::Corrupt("a message index varint ending at byte {} is longer than 5 bytes", *pos);
}

void WriteZigzagVarint(int32_t v, std::string* out) {
  uint32_t z = (static_cast<uint32_t>(v) << 1) ^ static_cast<uint32_t>(v >> 31);
  while (z >= 0x80) {
    out->push_back(static_cast<char>((z & 0x7f) | 0x80));
    z >>= 7;
  }
  out->push_back(static_cast<char>(z));
}

}  // namespace

std::string_view SchemaTypeName(SchemaType type) {
  switch (type) {
    case SchemaType::kAvro:
      return "AVRO";
    case SchemaType::kProtobuf:
      return "PROTOBUF";
    case SchemaType::kJson:
      return "JSON";
  }
  return "AVRO";
}

Result<SchemaType> ParseSchemaType(std::string_view name) {
  std::string upper(name);
  for (auto& c : upper) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  if (upper.empty() || upper == "AVRO") return SchemaType::kAvro;
  if (upper == "PROTOBUF") return SchemaType::kProtobuf;
  if (upper == "JSON" || upper == "JSON_SCHEMA" || upper == "JSONSCHEMA") return SchemaType::kJson;
  std::string shown(name.substr(0, 40));
  return Status::Invalid("unknown schema type '{}' (expected AVRO, PROTOBUF or JSON)", shown);
}

Result<Framing> ParseFraming(std::span<const uint8_t> bytes, bool protobuf) {
  if (bytes.size() < kFramingHeaderSize) {
    return Status::Corrupt(
        "a framed value has {} bytes, fewer than the 5 of Confluent's header (magic byte 0, "
        "4-byte schema id)",
        bytes.size());
  }
  if (bytes[0] != kMagicByte) {
    return Status::Corrupt(
        "a framed value starts with byte 0x{:02x}, not Confluent's magic byte 0 (not written by a "
        "schema registry serializer?)",
        bytes[0]);
  }
  Framing out;
  uint32_t id = (uint32_t{bytes[1]} << 24) | (uint32_t{bytes[2]} << 16) | (uint32_t{bytes[3]} << 8) | bytes[4];
  out.schema_id = static_cast<int32_t>(id);
  size_t pos = kFramingHeaderSize;
  if (protobuf) {
    ASSIGN_OR_RAISE(int32_t count, ReadZigzagVarint(bytes, &pos));
    if (count == 0) {
      out.message_indexes.push_back(0);
    } else {
      if (count < 0 || static_cast<size_t>(count) > kMaxMessageIndexes) {
        return Status::Corrupt("a framed Protobuf value (schema id {}) declares {} message indexes (expected 1 to {})",
                               out.schema_id, count, kMaxMessageIndexes);
      }
      for (int32_t i = 0; i < count; ++i) {
        ASSIGN_OR_RAISE(int32_t index, ReadZigzagVarint(bytes, &pos));
        if (index < 0) {
          return Status::Corrupt("a framed Protobuf value (schema id {}) has the negative message index {}",
                                 out.schema_id, index);
        }
        out.message_indexes.push_back(index);
      }
    }
  }
  out.body_offset = pos;
  return out;
}

Result<Framing> ParseFraming(std::string_view bytes, bool protobuf) {
  return ParseFraming(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), protobuf);
}

std::string Frame(int32_t id, std::span<const int32_t> message_indexes, bool protobuf, std::string_view body) {
  std::string out;
  out.reserve(kFramingHeaderSize + 2 + body.size());
  auto u = static_cast<uint32_t>(id);
  out.push_back(static_cast<char>(kMagicByte));
  out.push_back(static_cast<char>(u >> 24));
  out.push_back(static_cast<char>(u >> 16));
  out.push_back(static_cast<char>(u >> 8));
  out.push_back(static_cast<char>(u));
  if (protobuf) {
    if (message_indexes.empty() || (message_indexes.size() == 1 && message_indexes[0] == 0)) {
      out.push_back(0);
    } else {
      WriteZigzagVarint(static_cast<int32_t>(message_indexes.size()), &out);
      for (int32_t i : message_indexes) WriteZigzagVarint(i, &out);
    }
  }
  out.append(body);
  return out;
}

Result<Schema> ParseSchemaResponse(std::string_view body, std::string_view what) {
  auto j = json::Parse(body);
  if (!j.is_object()) return Status::Corrupt("{}: the response is not a JSON object", what);
  return SchemaOf(j, what);
}

Result<SubjectVersion> ParseSubjectVersionResponse(std::string_view body, std::string_view what) {
  auto j = json::Parse(body);
  if (!j.is_object()) return Status::Corrupt("{}: the response is not a JSON object", what);
  SubjectVersion out;
  ASSIGN_OR_RAISE(out.subject, RequiredString(j, "subject", what));
  ASSIGN_OR_RAISE(out.id, RequiredInt32(j, "id", what));
  ASSIGN_OR_RAISE(out.version, RequiredInt32(j, "version", what));
  ASSIGN_OR_RAISE(out.schema, SchemaOf(j, what));
  return out;
}

Result<int32_t> ParseRegisterResponse(std::string_view body, std::string_view what) {
  auto j = json::Parse(body);
  if (!j.is_object()) return Status::Corrupt("{}: the response is not a JSON object", what);
  return RequiredInt32(j, "id", what);
}

std::string SchemaRequestBody(const Schema& schema) {
  Json j = {{"schema", schema.text}};
  if (schema.type != SchemaType::kAvro) j["schemaType"] = std::string(SchemaTypeName(schema.type));
  if (!schema.references.empty()) {
    Json refs = Json::array();
    for (const auto& r : schema.references)
      refs.push_back({{"name", r.name}, {"subject", r.subject}, {"version", r.version}});
    j["references"] = std::move(refs);
  }
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

RegistryError ParseErrorResponse(std::string_view body) {
  RegistryError out;
  auto j = json::Parse(body);
  if (j.is_object()) {
    const Json* code = Member(j, "error_code");
    if (code != nullptr && code->is_number_integer()) {
      auto c = code->get<int64_t>();
      if (c >= std::numeric_limits<int>::min() && c <= std::numeric_limits<int>::max())
        out.error_code = static_cast<int>(c);
    }
    const Json* message = Member(j, "message");
    if (message != nullptr && message->is_string()) {
      out.message = message->get<std::string>();
      if (out.message.size() > 500) out.message = out.message.substr(0, 497) + "...";
      return out;
    }
  }
  std::string text(body.substr(0, 200));
  for (auto& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  if (body.size() > 200) text += "...";
  out.message = std::move(text);
  return out;
}

}  // namespace thaw::registry

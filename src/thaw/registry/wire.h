// The pure parts of a Confluent-compatible schema registry client (issue 23):
// Confluent's wire framing of keys and values, and the registry REST API's
// request and response bodies. Everything here takes untrusted bytes (a
// topic's records, a server's responses) and returns a Status for any input;
// nothing throws. Built into thaw_base (no curl, no Arrow) so that
// fuzz/registry_wire_fuzz.cc reaches it; registry/client.h does the HTTP.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "thaw/common/status.h"

namespace thaw::registry {

enum class SchemaType { kAvro, kProtobuf, kJson };

// "AVRO", "PROTOBUF", "JSON": the registry's schemaType names.
std::string_view SchemaTypeName(SchemaType type);
// A schemaType name, case-insensitive ("json" also as "JSON_SCHEMA"); the
// registry omits schemaType for Avro, so an empty name is AVRO.
Result<SchemaType> ParseSchemaType(std::string_view name);

// A schema's reference to another registered schema (Protobuf imports, Avro
// named types, JSON Schema $refs): `name` is how the schema refers to it.
struct SchemaReference {
  std::string name;
  std::string subject;
  int32_t version = 0;
  bool operator==(const SchemaReference&) const = default;
};

struct Schema {
  SchemaType type = SchemaType::kAvro;
  std::string text;
  std::vector<SchemaReference> references;
  bool operator==(const Schema&) const = default;
};

// A schema under a subject: GET /subjects/S/versions/latest and the lookup
// POST /subjects/S.
struct SubjectVersion {
  std::string subject;
  int32_t id = 0;
  int32_t version = 0;
  Schema schema;
};

// ---- Confluent's wire framing ----------------------------------------------
// A framed key or value: magic byte 0, the schema id (4 bytes, big-endian),
// for Protobuf the message indexes (the path of the message type among the
// .proto file's messages), then the serialized body. The indexes are a
// zigzag varint count and zigzag varint entries; the common [0] (the file's
// first message) is written as the single byte 0.
inline constexpr uint8_t kMagicByte = 0;
inline constexpr size_t kFramingHeaderSize = 5;
// More message indexes than any sane nesting depth: refused as corrupt.
inline constexpr size_t kMaxMessageIndexes = 64;

struct Framing {
  int32_t schema_id = 0;
  std::vector<int32_t> message_indexes;  // Protobuf only; [0] for the single-zero-byte form
  size_t body_offset = 0;                // where the serialized body starts
};

// `protobuf`: read the message indexes after the id (their presence is not
// self-describing: the schema's type says it).
Result<Framing> ParseFraming(std::span<const uint8_t> bytes, bool protobuf);
Result<Framing> ParseFraming(std::string_view bytes, bool protobuf);

// The framed bytes of `body` with schema `id`; `message_indexes` are written
// when `protobuf` (empty or [0] as the single byte 0).
std::string Frame(int32_t id, std::span<const int32_t> message_indexes, bool protobuf, std::string_view body);

// ---- REST API bodies -------------------------------------------------------
// `what` names the request in errors ("GET http://h:8081/schemas/ids/7").

// GET /schemas/ids/N: {"schema", "schemaType"?, "references"?}.
Result<Schema> ParseSchemaResponse(std::string_view body, std::string_view what);
// GET /subjects/S/versions/V and POST /subjects/S (lookup):
// {"subject", "id", "version", "schema", "schemaType"?, "references"?}.
Result<SubjectVersion> ParseSubjectVersionResponse(std::string_view body, std::string_view what);
// POST /subjects/S/versions: {"id"}.
Result<int32_t> ParseRegisterResponse(std::string_view body, std::string_view what);

// The request body of a registration or lookup: {"schema", "schemaType"
// (omitted for Avro, as Confluent's clients do), "references"?}.
std::string SchemaRequestBody(const Schema& schema);

// A registry's error body {"error_code": 40403, "message": "Schema not found"}.
struct RegistryError {
  std::optional<int> error_code;
  std::string message;  // the server's message, or a short one-line excerpt of a non-JSON body
};
RegistryError ParseErrorResponse(std::string_view body);

}  // namespace thaw::registry

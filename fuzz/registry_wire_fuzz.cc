// libFuzzer target: Confluent's wire framing (record keys and values from a
// topic) and schema registry response bodies (from the network) are untrusted:
// they must parse or fail with a Status, never throw or crash. A framing that
// parses must frame back to the same header bytes. Seeds: fuzz/corpus/registry_wire
// (framed Avro/Protobuf values, a schema, a subject version, an error body).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string_view>

#include "thaw/registry/wire.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace registry = thaw::registry;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  for (bool protobuf : {false, true}) {
    auto framing = registry::ParseFraming(bytes, protobuf);
    if (!framing.ok()) continue;
    if (framing->body_offset > size) std::abort();
    std::string body(bytes.substr(framing->body_offset));
    std::string again = registry::Frame(framing->schema_id, framing->message_indexes, protobuf, body);
    auto reparsed = registry::ParseFraming(again, protobuf);
    if (!reparsed.ok() || reparsed->schema_id != framing->schema_id ||
        reparsed->message_indexes != framing->message_indexes) {
      std::abort();
    }
  }
  (void)registry::ParseSchemaResponse(bytes, "fuzz schema");
  (void)registry::ParseSubjectVersionResponse(bytes, "fuzz subject version");
  (void)registry::ParseRegisterResponse(bytes, "fuzz register");
  (void)registry::ParseErrorResponse(bytes);
  return 0;
}

// libFuzzer target: the table property thaw.row.schema-refs.<ID> (JSON from
// a table's metadata, written by any writer) must parse or fail with a
// Status, never crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "thaw/records/schema_references.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)thaw::records::ReferencesFromJson(text, "thaw.row.schema-refs.1");
  return 0;
}

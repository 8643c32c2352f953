// libFuzzer target: a table's schema.name-mapping.default (untrusted: it
// comes from table metadata in object stores and catalogs) must parse or
// fail with a Status, never crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "thaw/iceberg/schema.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)thaw::iceberg::NameMapping::Parse(text, "fuzz name mapping");
  return 0;
}

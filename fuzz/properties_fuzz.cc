// libFuzzer target: a Java-style properties file (-F; user-supplied, often
// copied from elsewhere) must parse or fail with a Status, never crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "thaw/common/properties.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)thaw::ParseProperties(text, "fuzz.properties");
  return 0;
}

// libFuzzer target: table metadata JSON (untrusted: it comes from object
// stores and catalogs) must parse or fail with a Status, never crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "thaw/iceberg/table_metadata.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto md = thaw::iceberg::TableMetadata::Parse(text, "fuzz.metadata.json");
  if (md.ok()) {
    thaw::iceberg::SnapshotSelector sel;
    (void)thaw::iceberg::SelectSnapshot(*md, sel);
    for (const auto& s : md->schemas) (void)s.PathOf(1);
  }
  return 0;
}

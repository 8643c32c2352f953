// libFuzzer target for the Avro OCF reader and the schema parser: any input
// must produce a value or an error, never a crash, leak or runaway
// allocation.
//
// Seeds: fuzz/corpus/avro/ (regenerate with fuzz/make_avro_corpus.py).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "thaw/iceberg/avro/avro.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using thaw::avro::OcfReader;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);

  auto reader = OcfReader::Open(std::string(bytes), "fuzz");
  if (reader.ok()) {
    auto values = (*reader)->ReadAll();
    if (values.ok()) {
      // Exercise lookups and re-serialisation of what was read.
      for (const auto& v : *values) {
        (void)v.Get("a");
        (void)v.GetById(1);
      }
      (void)thaw::avro::SchemaToJson((*reader)->schema());
    }
  }

  // The manifest path: projection (skipped field ids) and one Value reused
  // across Next() calls.
  auto projected = OcfReader::Open(std::string(bytes), "fuzz");
  if (projected.ok()) {
    (*projected)->SkipFieldIds({1, 2, 108, 109, 110});
    thaw::avro::Value v;
    for (int i = 0; i < 100000; ++i) {
      auto more = (*projected)->Next(&v);
      if (!more.ok() || !*more) break;
      (void)v.GetById(3);
    }
  }

  auto schema = thaw::avro::ParseSchema(bytes);
  if (schema.ok()) {
    // A parsed schema must print to JSON that parses again.
    std::string json = thaw::avro::SchemaToJson(**schema);
    auto again = thaw::avro::ParseSchema(json);
    if (!again.ok()) __builtin_trap();
  }
  return 0;
}

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

  auto schema = thaw::avro::ParseSchema(bytes);
  if (schema.ok()) {
    // A parsed schema must print to JSON that parses again.
    std::string json = thaw::avro::SchemaToJson(**schema);
    auto again = thaw::avro::ParseSchema(json);
    if (!again.ok()) __builtin_trap();
  }
  return 0;
}

// libFuzzer target for JSON Schema values read through a schema registry
// (records/json_schema_value.h): a framed value (magic byte, schema id,
// JSON body) decoded with a fixed schema -- nested objects, arrays of
// objects, every scalar type, nullable fields -- into Arrow builders. Any
// input must give a row or an error, never a crash, leak or runaway
// allocation; a decoded row must be valid Arrow and must encode, and its
// encoding must decode and encode to the same bytes.
//
// Seeds: fuzz/corpus/json_schema_value/ (a few framed values).

#include <arrow/api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "framed_round_trip.h"
#include "thaw/parquet/arrow_type.h"
#include "thaw/records/json_schema_value.h"

namespace {

using thaw::records::JsonSchemaValue;

constexpr char kSchema[] = R"({"type": "object", "properties": {
  "id": {"type": "integer"}, "name": {"type": ["string", "null"]}, "price": {"type": "number"},
  "ok": {"type": "boolean"}, "tags": {"type": "array", "items": {"type": "string"}},
  "lines": {"type": "array", "items": {"$ref": "#/definitions/Line"}},
  "customer": {"type": "object", "properties": {"name": {"type": "string"}, "n": {"type": "integer"}}}},
  "definitions": {"Line": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "number"}}}}})";

struct Codec {
  std::shared_ptr<const JsonSchemaValue> schema;
  std::shared_ptr<arrow::DataType> arrow_type;
};

const Codec& Get() {
  static const Codec codec = [] {
    auto s = JsonSchemaValue::Make(kSchema, 100);
    if (!s.ok()) __builtin_trap();
    auto t = thaw::parquet::ArrowTypeOf(*(*s)->iceberg_type());
    if (!t.ok()) __builtin_trap();
    return Codec{*s, *t};
  }();
  return codec;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Codec& c = Get();
  thaw::fuzz::CheckFramedRoundTrip(*c.schema, c.arrow_type, std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}

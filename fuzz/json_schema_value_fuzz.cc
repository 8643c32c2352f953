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

std::shared_ptr<arrow::StructArray> DecodeOne(const Codec& c, std::string_view value) {
  std::unique_ptr<arrow::ArrayBuilder> b;
  if (!arrow::MakeBuilder(arrow::default_memory_pool(), c.arrow_type, &b).ok()) __builtin_trap();
  auto* sb = static_cast<arrow::StructBuilder*>(b.get());
  if (!c.schema->DecodeFramed(value, sb).ok()) {
    if (sb->length() != 0) __builtin_trap();  // an error appends nothing
    return nullptr;
  }
  std::shared_ptr<arrow::Array> out;
  if (!sb->Finish(&out).ok() || !out->ValidateFull().ok() || out->length() != 1) __builtin_trap();
  return std::static_pointer_cast<arrow::StructArray>(out);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Codec& c = Get();
  const std::string_view value(reinterpret_cast<const char*>(data), size);
  auto row = DecodeOne(c, value);
  if (!row) return 0;
  std::string once;
  if (!c.schema->EncodeFramed(*row, 0, 1, &once).ok()) __builtin_trap();
  auto again = DecodeOne(c, once);
  if (!again) __builtin_trap();
  std::string twice;
  if (!c.schema->EncodeFramed(*again, 0, 1, &twice).ok() || twice != once) __builtin_trap();
  return 0;
}

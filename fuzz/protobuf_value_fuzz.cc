// libFuzzer target for Protobuf values read through a schema registry
// (records/protobuf_value.h): a framed value (magic byte, schema id,
// message indexes, body) decoded with a fixed schema -- nested messages,
// repeated fields, a map, an enum, oneof, optional, unsigned 64-bit --
// into Arrow builders. Any input must give a row or an error, never a
// crash, leak or runaway allocation; a decoded row must be valid Arrow and
// must encode, and its encoding must decode and encode to the same bytes.
//
// Seeds: fuzz/corpus/protobuf_value/ (a few framed messages).

#include <arrow/api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "thaw/records/protobuf_value.h"

namespace {

using thaw::records::ProtobufValueSchema;

constexpr char kProto[] = R"(syntax = "proto3";
package fuzz;
enum Kind { A = 0; B = 1; }
message Order {
  message Line { string sku = 1; uint64 qty = 2; repeated sint32 marks = 3; }
  int64 id = 1;
  string item = 2;
  repeated Line lines = 3;
  map<string, Line> by_sku = 4;
  Kind kind = 5;
  optional bytes blob = 6;
  oneof pick { fixed32 f = 7; double d = 8; }
  repeated Kind kinds = 9;
}
)";

std::shared_ptr<const ProtobufValueSchema> Schema() {
  static const std::shared_ptr<const ProtobufValueSchema> schema = [] {
    const int32_t indexes[] = {0};
    auto r = ProtobufValueSchema::Make(kProto, indexes, 100);
    if (!r.ok()) __builtin_trap();
    return *r;
  }();
  return schema;
}

std::shared_ptr<arrow::StructArray> DecodeOne(const ProtobufValueSchema& s, std::string_view value) {
  std::unique_ptr<arrow::ArrayBuilder> b;
  if (!arrow::MakeBuilder(arrow::default_memory_pool(), s.arrow_type(), &b).ok()) __builtin_trap();
  auto* sb = static_cast<arrow::StructBuilder*>(b.get());
  if (!s.DecodeFramed(value, sb).ok()) {
    if (sb->length() != 0) __builtin_trap();  // an error appends nothing
    return nullptr;
  }
  std::shared_ptr<arrow::Array> out;
  if (!sb->Finish(&out).ok() || !out->ValidateFull().ok() || out->length() != 1) __builtin_trap();
  return std::static_pointer_cast<arrow::StructArray>(out);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto& s = *Schema();
  const std::string_view value(reinterpret_cast<const char*>(data), size);
  auto row = DecodeOne(s, value);
  if (!row) return 0;
  std::string once;
  if (!s.EncodeFramed(*row, 0, 1, &once).ok()) __builtin_trap();
  auto again = DecodeOne(s, once);
  if (!again) __builtin_trap();
  std::string twice;
  if (!s.EncodeFramed(*again, 0, 1, &twice).ok() || twice != once) __builtin_trap();
  return 0;
}

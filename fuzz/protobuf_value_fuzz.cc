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

#include "framed_round_trip.h"
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto& s = *Schema();
  thaw::fuzz::CheckFramedRoundTrip(s, s.arrow_type(), std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}

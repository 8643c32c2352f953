// The property every framed value codec of a schema registry format is
// fuzzed for (protobuf_value_fuzz, json_schema_value_fuzz): any input gives
// a row or an error, never a crash, leak or runaway allocation; an error
// appends nothing; a decoded row is valid Arrow and encodes, and its
// encoding decodes and encodes to the same bytes.
#pragma once

#include <arrow/api.h>

#include <memory>
#include <string>
#include <string_view>

namespace thaw::fuzz {

// `codec` has DecodeFramed(value, StructBuilder*) and
// EncodeFramed(StructArray, row, schema_id, std::string*, StructFields*); `type` is the
// Arrow type of the struct it decodes into.
template <typename Codec>
std::shared_ptr<arrow::StructArray> DecodeOneFramed(const Codec& codec, const std::shared_ptr<arrow::DataType>& type,
                                                    std::string_view value) {
  std::unique_ptr<arrow::ArrayBuilder> b;
  if (!arrow::MakeBuilder(arrow::default_memory_pool(), type, &b).ok()) __builtin_trap();
  auto* sb = static_cast<arrow::StructBuilder*>(b.get());
  if (!codec.DecodeFramed(value, sb).ok()) {
    if (sb->length() != 0) __builtin_trap();  // an error appends nothing
    return nullptr;
  }
  std::shared_ptr<arrow::Array> out;
  if (!sb->Finish(&out).ok() || !out->ValidateFull().ok() || out->length() != 1) __builtin_trap();
  return std::static_pointer_cast<arrow::StructArray>(out);
}

template <typename Codec>
void CheckFramedRoundTrip(const Codec& codec, const std::shared_ptr<arrow::DataType>& type, std::string_view value) {
  auto row = DecodeOneFramed(codec, type, value);
  if (!row) return;
  std::string once;
  if (!codec.EncodeFramed(*row, 0, 1, &once, nullptr).ok()) __builtin_trap();
  auto again = DecodeOneFramed(codec, type, once);
  if (!again) __builtin_trap();
  std::string twice;
  if (!codec.EncodeFramed(*again, 0, 1, &twice, nullptr).ok() || twice != once) __builtin_trap();
}

}  // namespace thaw::fuzz

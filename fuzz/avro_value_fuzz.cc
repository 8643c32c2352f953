// libFuzzer target for the Avro value codec of the row layout
// (records/avro_value.h): the schema mapping, the bounded decoder into Arrow
// builders and the encoder. Input: an Avro schema JSON, a NUL byte, then the
// datum; with nothing before the NUL (or no NUL at all) the datum is decoded
// with the all-types schema of tests/unit/records/resources. Any input must
// give a row or an error, never a crash, leak or runaway allocation; a
// decoded row must be valid Arrow, must encode, and its encoding must decode
// and encode to the same bytes again.
//
// Seeds: fuzz/corpus/avro_value/ (fuzz/make_avro_value_corpus.py).

#include <arrow/api.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "thaw/records/avro_value.h"

namespace {

using thaw::records::AvroValueSchema;

std::shared_ptr<const AvroValueSchema> DefaultSchema() {
  static const std::shared_ptr<const AvroValueSchema> schema = [] {
    std::ifstream in(THAW_SOURCE_DIR "/tests/unit/records/resources/avro_value_all_types.avsc");
    std::stringstream s;
    s << in.rdbuf();
    auto r = AvroValueSchema::Make(s.str(), 100);
    if (!r.ok()) __builtin_trap();
    return *r;
  }();
  return schema;
}

std::shared_ptr<arrow::StructArray> DecodeOne(const AvroValueSchema& s, std::string_view datum, bool framed) {
  auto b = s.MakeBuilder();
  if (!b.ok()) __builtin_trap();
  std::optional<int32_t> id;
  if (!s.Decode(datum, framed, b->get(), &id).ok()) {
    if ((*b)->length() != 0) __builtin_trap();  // an error appends nothing
    return nullptr;
  }
  std::shared_ptr<arrow::Array> out;
  if (!(*b)->Finish(&out).ok() || !out->ValidateFull().ok() || out->length() != 1) __builtin_trap();
  return std::static_pointer_cast<arrow::StructArray>(out);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::shared_ptr<const AvroValueSchema> schema;
  std::string_view datum = in;
  if (size_t nul = in.find('\0'); nul != std::string_view::npos && nul > 0) {
    auto made = AvroValueSchema::Make(in.substr(0, nul), 1);
    if (!made.ok()) return 0;
    schema = *made;
    datum = in.substr(nul + 1);
  } else {
    schema = DefaultSchema();
    if (nul == 0) datum = in.substr(1);
  }
  for (bool framed : {false, true}) {
    auto row = DecodeOne(*schema, datum, framed);
    if (!row) continue;
    std::string once;
    if (!schema->Encode(*row, 0, framed ? std::optional<int32_t>(7) : std::nullopt, &once).ok()) __builtin_trap();
    auto again = DecodeOne(*schema, once, framed);
    if (!again) __builtin_trap();
    std::string twice;
    if (!schema->Encode(*again, 0, framed ? std::optional<int32_t>(7) : std::nullopt, &twice).ok() || twice != once) {
      __builtin_trap();
    }
  }
  return 0;
}

// Serialises Arrow values as JSON for layouts that keep no raw value bytes
// (Kafka Connect sink, plain row tables, decoded structs). The type mapping
// is documented in docs/layouts.md ("Rows as JSON").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace arrow { class Array; }

namespace thaw::records {

void AppendJsonValue(const arrow::Array& array, int64_t row, std::string* out);
void AppendJsonString(std::string_view s, std::string* out);
std::string Base64Encode(std::string_view bytes);
// Formats days / microseconds since the epoch as ISO-8601 (UTC).
std::string FormatDate(int64_t days);
std::string FormatTimestampMicros(int64_t micros);

}  // namespace thaw::records

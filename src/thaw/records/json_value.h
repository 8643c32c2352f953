// Single values as JSON, and JSON objects into Arrow builders: what the
// JSON row builder (json_row.h), the thaw-row JSON codec and JSON Schema
// values (json_schema_value.h) share. No layout or Parquet here, so a fuzz
// target can take it alone.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "thaw/common/status.h"
#include "thaw/iceberg/schema.h"

namespace arrow {
class Array;
class StructBuilder;
}  // namespace arrow

namespace thaw::records {

class StructFields;  // struct_fields.h


// Row `row` of `array` as a JSON value (null as null; decimals, dates,
// times, timestamps and uuids as strings; binary as base64; structs,
// lists and maps as objects and arrays).
// `fields`: the caller's cache of the array's struct children across rows
// (struct_fields.h; null: none).
void AppendJsonValue(const arrow::Array& array, int64_t row, std::string* out, StructFields* fields = nullptr);

// Parses `text` as a JSON object and appends it as one row of `builder`,
// whose type is `type` (a struct of boolean, long, double, string, struct
// and list fields, matched by name): a field the object lacks, or whose
// value does not fit the field's type, is null; a string field takes a
// non-string value as its JSON text. *appended is false, and nothing is
// appended, when `text` is not a JSON object.
Status AppendJsonObject(const iceberg::Type& type, std::string_view text, arrow::StructBuilder* builder,
                        bool* appended);

void AppendJsonString(std::string_view s, std::string* out);
// Doubles and floats as Java's Double.toString / Float.toString write them
// (what Kafka Connect's JsonConverter emits through Jackson): shortest
// round-trip digits, always with a decimal point or an exponent ("4541.0",
// "1.0E20", "1.0E-5"); NaN and ±Infinity as the strings "NaN", "Infinity",
// "-Infinity".
void AppendJsonDouble(double v, std::string* out);
void AppendJsonFloat(float v, std::string* out);
std::string Base64Encode(std::string_view bytes);
// Formats days / microseconds since the epoch as ISO-8601 (UTC).
std::string FormatDate(int64_t days);
std::string FormatTimestampMicros(int64_t micros);
// A uuid's 16 bytes as 8-4-4-4-12 lowercase hex.
std::string FormatUuid(std::string_view bytes);

}  // namespace thaw::records

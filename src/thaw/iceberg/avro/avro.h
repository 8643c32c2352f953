// Avro object container files (OCF): a small reader and writer that keep what
// Iceberg needs and generic Avro libraries drop: every header metadata key,
// and the `field-id` / `element-id` / `key-id` / `value-id` schema attributes.
//
// Input bytes are untrusted: every length and count is checked against the
// bytes that remain before anything is allocated (see fuzz/avro_fuzz.cc).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "thaw/common/status.h"

namespace thaw::avro {

enum class Type {
  kNull, kBoolean, kInt, kLong, kFloat, kDouble, kBytes, kString,
  kFixed, kEnum, kArray, kMap, kRecord, kUnion,
};

struct Schema;
using SchemaPtr = std::shared_ptr<const Schema>;

struct Field {
  std::string name;
  std::optional<int32_t> field_id;  // Iceberg "field-id" attribute
  SchemaPtr schema;
};

struct Schema {
  Type type = Type::kNull;
  std::string name;                  // record / fixed / enum full name
  std::string logical_type;          // "logicalType" attribute, if any
  std::vector<Field> fields;         // kRecord
  SchemaPtr items;                   // kArray
  SchemaPtr values;                  // kMap
  std::vector<SchemaPtr> branches;   // kUnion
  std::vector<std::string> symbols;  // kEnum
  int32_t fixed_size = 0;            // kFixed
  std::optional<int32_t> element_id; // kArray "element-id"
  std::optional<int32_t> key_id;     // kMap "key-id" (or map-as-array record)
  std::optional<int32_t> value_id;   // kMap "value-id"
  // Every other attribute ("precision", "scale", "adjust-to-utc", "doc", ...)
  // as JSON text, so SchemaToJson keeps them.
  std::map<std::string, std::string> attributes;

  // Index of the record field with this name / field id, or -1.
  int FieldIndex(std::string_view field_name) const;
  int FieldIndexById(int32_t id) const;
};

// Parses an Avro schema from its JSON text. Named types may be referenced
// later by name. Errors name the offending JSON path.
Result<SchemaPtr> ParseSchema(std::string_view json_text);
// The same after `named_first`: schemas whose named types it may use (a
// schema registry's references, dependencies first; Corrupt naming which
// one is not a schema).
Result<SchemaPtr> ParseSchema(std::string_view json_text, std::span<const std::string> named_first);
// Serialises a schema back to JSON (attributes kept).
std::string SchemaToJson(const Schema& schema);

// A decoded datum. Unions are resolved: a value holds the chosen branch's
// type directly, so a null branch gives type == kNull.
struct Value {
  Type type = Type::kNull;
  bool boolean = false;
  int64_t integer = 0;             // kInt, kLong, kEnum (symbol index)
  double real = 0;                 // kFloat, kDouble
  std::string bytes;               // kBytes, kString, kFixed
  std::vector<Value> items;        // kArray elements, kMap values, kRecord fields (schema order)
  std::vector<std::string> keys;   // kMap keys
  const Schema* schema = nullptr;  // the resolved (non-union) schema this value was read with
  // Set by OcfReader on records and on every top-level datum: keeps `schema`
  // (and every nested schema) alive after the reader is gone, so Get/GetById
  // stay valid on a record moved out of a larger value.
  SchemaPtr schema_owner;

  bool is_null() const { return type == Type::kNull; }
  // Record field by name / Iceberg field id; nullptr when the writer schema
  // has no such field.
  const Value* Get(std::string_view field_name) const;
  const Value* GetById(int32_t field_id) const;

  // Builders, mainly for OcfWriter::Append.
  static Value Null();
  static Value Boolean(bool b);
  static Value Int(int32_t i);
  static Value Long(int64_t i);
  static Value Float(float f);
  static Value Double(double d);
  static Value String(std::string s);
  static Value Bytes(std::string b);
  static Value Fixed(std::string b);
  static Value Enum(int32_t symbol_index);
  static Value Array(std::vector<Value> elements);
  static Value Map(std::vector<std::string> map_keys, std::vector<Value> map_values);
  static Value Record(std::vector<Value> field_values);
};

enum class Codec { kNull, kDeflate, kSnappy, kZstd };
Result<Codec> ParseCodec(std::string_view name);
std::string_view CodecName(Codec codec);

class OcfReader {
 public:
  // `source` names the file in errors ("manifest s3://b/x.avro: ...").
  static Result<std::unique_ptr<OcfReader>> Open(std::string data, std::string source);

  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  std::optional<std::string> Meta(const std::string& key) const;
  const Schema& schema() const { return *schema_; }
  SchemaPtr schema_ptr() const { return schema_; }
  Codec codec() const { return codec_; }

  // Reads the next datum into *out, in place: nested vectors and strings of
  // a Value reused across calls are recycled (no reallocation per datum).
  // Read a value by its type: storage its type does not use may be stale.
  // Returns false at the end of the file.
  Result<bool> Next(Value* out);
  // Projection: record fields with these Iceberg field ids (at any depth)
  // are decoded past without being materialised; they read as null.
  void SkipFieldIds(std::vector<int32_t> ids);
  // Reads all remaining datums.
  Result<std::vector<Value>> ReadAll();

  ~OcfReader();

 private:
  OcfReader() = default;
  Status LoadBlock();
  Status Fail(const Status& st) const;  // prefixes the source name

  std::string_view block_view_;  // current block's datum bytes (into data_ or block_)
  int64_t block_objects_ = 0;    // objects the current block declared
  std::vector<int32_t> skip_ids_;  // sorted
  int64_t values_created_ = 0;   // bounds work on zero-byte values (see avro.cc)
  int64_t bytes_decoded_ = 0;    // decompressed datum bytes decoded so far

  std::string source_;
  std::string data_;
  size_t pos_ = 0;
  std::map<std::string, std::string> metadata_;
  SchemaPtr schema_;
  Codec codec_ = Codec::kNull;
  std::string sync_;
  std::string block_;          // decompressed current block
  size_t block_pos_ = 0;
  int64_t block_remaining_ = 0;
  int64_t block_index_ = 0;
};

class OcfWriter {
 public:
  static Result<std::unique_ptr<OcfWriter>> Make(SchemaPtr schema,
                                                 std::map<std::string, std::string> metadata,
                                                 Codec codec = Codec::kDeflate);
  // The value must match the schema (records: one item per field, unions:
  // any branch whose type matches the value's type).
  Status Append(const Value& value);
  // Flushes the last block and returns the complete file bytes.
  Result<std::string> Finish();

  ~OcfWriter();

 private:
  OcfWriter() = default;
  Status FlushBlock();

  SchemaPtr schema_;
  Codec codec_ = Codec::kDeflate;
  std::string out_;
  std::string sync_;
  std::string block_;
  int64_t block_count_ = 0;
  bool finished_ = false;
};

}  // namespace thaw::avro

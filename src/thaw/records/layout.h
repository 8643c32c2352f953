// Layouts: how the Kafka fields of a record map to the columns of an Iceberg
// table, per writer (Thaw, Redpanda, Bufstream, Aiven, AutoMQ, Kafka
// Connect's Iceberg sink, plain row tables). See docs/layouts.md.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/iceberg/table_metadata.h"
#include "thaw/records/schema_references.h"

namespace thaw::records {

class AvroValueSchema;
class FramedValueCodec;

// A column reached from the top level by field ids (names kept for files
// without ids and for messages).
struct ColumnPath {
  std::vector<int32_t> ids;
  std::vector<std::string> names;
  iceberg::TypePtr type;
  int32_t field_id() const { return ids.back(); }
  int32_t top_level_id() const { return ids.front(); }
  std::string dotted() const;
};

enum class HeaderShape { kListOfStructs, kMap };

struct Layout {
  std::string name;
  std::optional<ColumnPath> partition;  // absent: every record is partition 0
  std::optional<ColumnPath> offset;     // absent: offsets from row order (plain tables)
  std::optional<ColumnPath> timestamp;
  std::optional<ColumnPath> timestamp_type;
  std::optional<ColumnPath> key;
  std::optional<ColumnPath> value;     // raw bytes column
  std::vector<ColumnPath> value_json;  // value = these columns as a JSON object, when `value` is absent/null
  bool value_json_unwrap = false;      // single struct column: serialise the struct itself
  // v3 initial-default (metadata JSON text) of value_json columns that have
  // one, by field id: their value in files written before they existed.
  std::map<int32_t, std::string> value_json_defaults;
  // thaw-row tables of Avro values (thaw.row.value-format=avro): the struct
  // column of value_json re-encodes as a datum of this writer schema
  // (thaw.row.avro-schema) instead of JSON, with the Confluent header when
  // value_avro_schema_id (thaw.row.avro-schema-id) is set.
  std::shared_ptr<const AvroValueSchema> value_avro;
  std::optional<int32_t> value_avro_schema_id;
  // thaw-row tables of values read through a schema registry
  // (thaw.row.value-schemas=registry, archive/row_registry.h): each row's
  // schema id (column 13 value_schema_id) picks the writer schema
  // (thaw.row.avro-schema.<ID> or thaw.row.proto-schema.<ID>, resolved
  // against the value struct by name) and the framing the struct re-encodes with.
  std::optional<ColumnPath> value_schema_id;
  std::map<int32_t, std::shared_ptr<const FramedValueCodec>> value_by_id;
  // Ids whose writer schema the table holds but that does not resolve
  // against the value struct (no row should use them): why, for the error.
  std::map<int32_t, std::string> value_unresolved;
  // value_avro set by LayoutOptions::value_avro over value_json columns of
  // any layout: a single struct column (value_json_unwrap) is the record;
  // otherwise (wrap) the columns are the record's fields, by name.
  bool value_avro_wrap = false;
  // --value-format json-schema: the JSON rows framed with this registry id.
  std::optional<int32_t> value_json_frame_id;
  // --value-format protobuf: the value struct (value_avro_wrap as for Avro)
  // encoded and framed with this codec and id (none: a dry run that would
  // register the schema; framed with id 0 then, nothing is produced).
  std::shared_ptr<const FramedValueCodec> value_framed;
  std::optional<int32_t> value_framed_id;
  std::optional<ColumnPath> headers;
  std::optional<ColumnPath> topic;  // the source topic per row (Kafka Connect sink); absent: none stored
  HeaderShape header_shape = HeaderShape::kListOfStructs;
  std::vector<std::string> notes;  // fidelity caveats shown by `inspect`

 private:
  template <typename Self>
  static auto ColumnsOf(Self& l) {
    using Column = std::remove_reference_t<decltype((l.partition))>;  // const for a const Layout
    return Named<Column>{{{"partition", &l.partition},
                          {"offset", &l.offset},
                          {"timestamp", &l.timestamp},
                          {"timestamp_type", &l.timestamp_type},
                          {"key", &l.key},
                          {"value", &l.value},
                          {"headers", &l.headers},
                          {"topic", &l.topic}}};
  }

 public:
  // The Kafka fields with their columns, in the documented order
  // (partition, offset, timestamp, timestamp_type, key, value, headers,
  // topic): the one list that --column, `inspect` and projection walk.
  template <typename Column>
  using Named = std::array<std::pair<const char*, Column*>, 8>;
  Named<const std::optional<ColumnPath>> KafkaColumns() const { return ColumnsOf(*this); }
  Named<std::optional<ColumnPath>> KafkaColumns() { return ColumnsOf(*this); }

  // All top-level field ids the reader must project.
  std::vector<int32_t> TopLevelIds() const;
};

// Chooses the Avro writer schema (and schema registry id) that a table's
// decoded value columns are re-encoded with (replay and serve
// --value-format avro; registry/serializer.h). Called with the value
// struct: the single struct column, or the value columns as one struct.
class ValueAvroChooser {
 public:
  virtual ~ValueAvroChooser() = default;
  struct Choice {
    std::string schema_json;           // the schema's text (Avro JSON, JSON Schema, .proto)
    std::optional<int32_t> schema_id;  // framed with it when set
    std::string message_name;          // Protobuf: the message type of the text the values are
    SchemaReferences references;       // what the schema refers to (a registry's latest with references)
  };
  virtual Result<Choice> Choose(const iceberg::TypePtr& value_struct) = 0;
  // "avro": values encoded as Avro datums; "json-schema": the JSON rows,
  // framed with the id of a JSON Schema (Choice::schema_json); "protobuf":
  // values encoded as Protobuf messages (Choice::message_name).
  virtual std::string_view format() const { return "avro"; }
  // The same choice for another topic (serve --table-prefix names topics after tables).
  virtual std::shared_ptr<ValueAvroChooser> ForTopic(const std::string& topic) const = 0;
};

struct LayoutOptions {
  std::optional<std::string> forced;                    // --layout
  std::map<std::string, std::string> column_overrides;  // --column field=path
  // Values held as decoded columns are re-encoded as Avro with the chosen
  // schema instead of JSON. Tables whose values are bytes, or that keep each
  // row's schema id (thaw-row through a registry), are read as they are.
  std::shared_ptr<ValueAvroChooser> value_avro;
};

const std::vector<std::string>& LayoutNames();

// Detects (or applies the forced) layout against a schema, then applies the
// column overrides. Errors name the missing column and how to fix it.
Result<Layout> ResolveLayout(const iceberg::TableMetadata& md, const iceberg::Schema& schema,
                             const LayoutOptions& options);

// Parses "field=column" (field one of partition, offset, timestamp,
// timestamp_type, key, value, headers, topic).
Status ParseColumnOverride(const std::string& text, std::map<std::string, std::string>* out);

}  // namespace thaw::records

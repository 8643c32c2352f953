#include "thaw/records/layout.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "thaw/records/avro_value.h"
#include "thaw/records/json_row.h"
#include "thaw/records/framed_value.h"

namespace thaw::records {

using iceberg::NestedField;
using iceberg::Schema;
using iceberg::TypeId;

std::string ColumnPath::dotted() const {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) s += (i ? "." : "") + names[i];
  return s;
}

std::vector<int32_t> Layout::TopLevelIds() const {
  std::set<int32_t> ids;
  for (const auto& [name, c] : KafkaColumns()) {
    if (*c) ids.insert((*c)->top_level_id());
  }
  for (const auto& c : value_json) ids.insert(c.top_level_id());
  if (value_schema_id) ids.insert(value_schema_id->top_level_id());
  return {ids.begin(), ids.end()};
}

const std::vector<std::string>& LayoutNames() {
  static const std::vector<std::string> kNames = {"thaw",   "redpanda",      "bufstream", "aiven",
                                                  "automq", "kafka-connect", "plain",     "thaw-row"};
  return kNames;
}

namespace {

// Resolves a dotted name path against the schema.
std::optional<ColumnPath> Find(const Schema& schema, const std::string& dotted) {
  ColumnPath p;
  const std::vector<NestedField>* level = &schema.fields();
  size_t start = 0;
  while (true) {
    size_t dot = dotted.find('.', start);
    std::string part = dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    auto it = std::find_if(level->begin(), level->end(), [&](const NestedField& f) { return f.name == part; });
    if (it == level->end()) return std::nullopt;
    p.ids.push_back(it->id);
    p.names.push_back(it->name);
    p.type = it->type;
    if (dot == std::string::npos) break;
    if (it->type->id != TypeId::kStruct) return std::nullopt;
    level = &it->type->fields;
    start = dot + 1;
  }
  return p;
}

std::optional<ColumnPath> FindFirst(const Schema& s, std::initializer_list<const char*> candidates) {
  for (const char* c : candidates) {
    if (auto p = Find(s, c)) return p;
  }
  return std::nullopt;
}

bool IsBinaryLike(const ColumnPath& p) {
  return p.type->id == TypeId::kBinary || p.type->id == TypeId::kString || p.type->id == TypeId::kFixed;
}

// All top-level columns except those named (the Kafka metadata columns).
std::vector<ColumnPath> RowColumns(const Schema& s, const std::set<std::string>& exclude_prefixes) {
  std::vector<ColumnPath> out;
  for (const auto& f : s.fields()) {
    bool skip = false;
    for (const auto& p : exclude_prefixes) {
      if (f.name == p || f.name.rfind(p + "_", 0) == 0) skip = true;
    }
    if (skip) continue;
    out.push_back(ColumnPath{{f.id}, {f.name}, f.type});
  }
  return out;
}

std::string DetectName(const iceberg::TableMetadata& md, const Schema& s) {
  std::string prop = md.Property("thaw.layout");
  if (prop.rfind("thaw-row/", 0) == 0) return "thaw-row";
  if (prop.rfind("thaw", 0) == 0) return "thaw";
  if (Find(s, "kafka_partition") && Find(s, "kafka_offset")) {
    // `thaw archive --layout thaw-row`: the decoded value struct beside value_raw.
    auto value = Find(s, "value");
    if (value && value->type->id == TypeId::kStruct && Find(s, "value_raw")) return "thaw-row";
    return "thaw";
  }
  if (Find(s, "redpanda.offset")) return "redpanda";
  if (Find(s, "kafka.offset") && Find(s, "kafka.event_timestamp")) return "bufstream";
  if (Find(s, "kafka.offset") &&
      (Find(s, "key_raw") || Find(s, "value_raw") || Find(s, "kafka.batch_timestamp_type"))) {
    return "aiven";
  }
  if (Find(s, "_kafka_metadata.offset") &&
      (Find(s, "_kafka_key") || Find(s, "_kafka_value") || Find(s, "_kafka_header"))) {
    return "automq";
  }
  if (Find(s, "_kafka_metadata_offset") || Find(s, "_kafka_metadata.offset")) return "kafka-connect";
  if (Find(s, "kafka.offset")) return "bufstream";
  return "plain";
}

Result<Layout> Build(const std::string& name, const Schema& s) {
  Layout l;
  l.name = name;
  if (name == "thaw") {
    l.partition = Find(s, "kafka_partition");
    l.offset = Find(s, "kafka_offset");
    l.timestamp = Find(s, "kafka_timestamp");
    l.timestamp_type = Find(s, "kafka_timestamp_type");
    l.key = Find(s, "key");
    l.value = Find(s, "value");
    l.headers = Find(s, "headers");
    l.topic = Find(s, "kafka_topic");  // present when one table archives several topics
  } else if (name == "thaw-row") {
    // value_raw when the writer kept the original bytes, else the value
    // struct re-encoded (exactly the original bytes: the writer checked).
    l.partition = Find(s, "kafka_partition");
    l.offset = Find(s, "kafka_offset");
    l.timestamp = Find(s, "kafka_timestamp");
    l.timestamp_type = Find(s, "kafka_timestamp_type");
    l.key = Find(s, "key");
    l.value = Find(s, "value_raw");
    l.headers = Find(s, "headers");
    l.topic = Find(s, "kafka_topic");
    if (auto vs = Find(s, "value"); vs && vs->type->id == TypeId::kStruct) {
      l.value_json = {*vs};
      l.value_json_unwrap = true;
    }
  } else if (name == "redpanda") {
    l.partition = Find(s, "redpanda.partition");
    l.offset = Find(s, "redpanda.offset");
    l.timestamp = FindFirst(s, {"redpanda.timestamp", "redpanda.timestamp_v1"});
    l.timestamp_type = Find(s, "redpanda.timestamp_type");
    l.key = Find(s, "redpanda.key");
    l.headers = Find(s, "redpanda.headers");
    auto v = Find(s, "value");
    if (v && v->type->id == TypeId::kBinary) {
      l.value = v;
    } else {
      l.value_json = RowColumns(s, {"redpanda"});
      l.notes.push_back(
          "value is stored decoded (schema mode): replayed values are the row as JSON, not the original bytes");
    }
    if (l.key && l.key->type->id != TypeId::kBinary) {
      l.notes.push_back("redpanda.key is stored decoded: keys are its text, not the original bytes");
    }
  } else if (name == "bufstream") {
    l.partition = Find(s, "kafka.partition");
    l.offset = Find(s, "kafka.offset");
    l.timestamp = FindFirst(s, {"kafka.event_timestamp", "kafka.ingest_timestamp"});
    l.key = FindFirst(s, {"key.__raw__"});
    l.value = FindFirst(s, {"value.__raw__"});
    l.headers = Find(s, "headers");
    if (auto vs = Find(s, "value"); vs && vs->type->id == TypeId::kStruct) {
      // __raw__ is kept only without a schema or on decode errors; else rebuild as JSON.
      ColumnPath decoded = *vs;
      l.value_json = {decoded};
      l.value_json_unwrap = true;
      l.notes.push_back(
          "rows without value.__raw__ are replayed as their decoded value struct in JSON, not the original Protobuf "
          "bytes");
    }
  } else if (name == "aiven") {
    l.partition = Find(s, "kafka.partition");
    l.offset = Find(s, "kafka.offset");
    l.timestamp = Find(s, "kafka.timestamp");
    l.timestamp_type = Find(s, "kafka.batch_timestamp_type");
    l.key = Find(s, "key_raw");
    l.value = Find(s, "value_raw");
    l.headers = Find(s, "headers");
    if (auto vs = Find(s, "value"); vs && vs->type->id == TypeId::kStruct) {
      l.value_json = {*vs};
      l.value_json_unwrap = true;
      l.notes.push_back(
          "rows without value_raw are replayed as their decoded Avro value in JSON, not the original bytes");
    }
  } else if (name == "automq") {
    l.partition = Find(s, "_kafka_metadata.partition");
    l.offset = Find(s, "_kafka_metadata.offset");
    l.timestamp = Find(s, "_kafka_metadata.timestamp");
    l.key = Find(s, "_kafka_key");
    l.value = Find(s, "_kafka_value");
    l.headers = Find(s, "_kafka_header");
    l.header_shape = HeaderShape::kMap;
    l.notes.push_back("AutoMQ stores headers as a map: one value per key, original order lost");
    if (l.key && !IsBinaryLike(*l.key)) l.key.reset();
    if (l.value && !IsBinaryLike(*l.value)) {
      l.value.reset();
    }
    if (!l.value) {
      l.value_json = RowColumns(s, {"_kafka_metadata", "_kafka_key", "_kafka_header"});
      l.notes.push_back("value is stored decoded: replayed values are the row as JSON");
    }
  } else if (name == "kafka-connect") {
    l.partition = FindFirst(s, {"_kafka_metadata_partition", "_kafka_metadata.partition"});
    l.offset = FindFirst(s, {"_kafka_metadata_offset", "_kafka_metadata.offset"});
    l.timestamp = FindFirst(s, {"_kafka_metadata_timestamp", "_kafka_metadata.timestamp"});
    l.topic = FindFirst(s, {"_kafka_metadata_topic", "_kafka_metadata.topic"});
    l.value_json = RowColumns(s, {"_kafka_metadata"});
    l.notes.push_back(
        "Kafka Connect's sink keeps no key, headers or raw value: values are the row as JSON, keys are null");
  } else if (name == "plain") {
    l.value_json = RowColumns(s, {});
    l.notes.push_back(
        "plain row table: one partition (0), offsets are row positions in scan order (see docs/layouts.md), values are "
        "rows as JSON");
  } else {
    std::string names;
    for (const auto& n : LayoutNames()) names += (names.empty() ? "" : ", ") + n;
    return Status::Invalid("unknown layout '{}': valid layouts are {}", name, names);
  }
  return l;
}

}  // namespace

Status ParseColumnOverride(const std::string& text, std::map<std::string, std::string>* out) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    return Status::Invalid("--column '{}' is not FIELD=COLUMN (e.g. --column offset=kafka.offset)", text);
  }
  std::string field = text.substr(0, eq);
  const auto names = Layout().KafkaColumns();
  if (std::none_of(names.begin(), names.end(), [&](const auto& n) { return field == n.first; })) {
    return Status::Invalid(
        "--column '{}': unknown Kafka field '{}' (use partition, offset, timestamp, "
        "timestamp_type, key, value, headers or topic)",
        text, field);
  }
  (*out)[field] = text.substr(eq + 1);
  return Status::OK();
}

// The writer schema of a thaw-row table of Avro values (its properties; see
// archive/row_avro.h), checked against the table's value struct.
static Status BindAvroValue(const iceberg::TableMetadata& md, Layout* l) {
  const std::string text = md.Property("thaw.row.avro-schema");
  if (text.empty()) {
    return Status::Corrupt(
        "the row table holds Avro values (thaw.row.value-format=avro) but has no thaw.row.avro-schema property: "
        "its values cannot be re-encoded");
  }
  // Value field ids start at 100 (archive/row_value.h kFirstValueFieldId).
  auto avro = AvroValueSchema::Make(text, 100);
  if (!avro.ok()) return avro.status().WithContext("table property thaw.row.avro-schema");
  RETURN_NOT_OK((*avro)->CheckMatches(*l->value_json[0].type).WithContext("thaw.row.avro-schema"));
  if (std::string id = md.Property("thaw.row.avro-schema-id"); !id.empty()) {
    int32_t v = 0;
    auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), v);
    if (ec != std::errc() || end != id.data() + id.size()) {
      return Status::Corrupt("table property thaw.row.avro-schema-id '{}' is not a number", id);
    }
    l->value_avro_schema_id = v;
  }
  l->value_avro = std::move(*avro);
  return Status::OK();
}

// The writer schemas of a thaw-row table of values read through a schema
// registry (archive/row_registry.h): one per id, resolved against the value
// struct. An id whose schema does not resolve (an evolution archive had
// not committed yet when it stopped) is left out: no row uses it.
static Status BindRegistryValues(const iceberg::TableMetadata& md, const Schema& schema, Layout* l) {
  l->value_schema_id = Find(schema, "value_schema_id");
  if (!l->value_schema_id || l->value_schema_id->type->id != TypeId::kInt) {
    return Status::Corrupt(
        "the row table reads values through a schema registry (thaw.row.value-schemas=registry) but has no int "
        "column value_schema_id: its values cannot be re-encoded");
  }
  const std::string format = md.Property("thaw.row.value-format");
  if (format != "avro" && format != "protobuf" && format != "json-schema") {
    return Status::Unsupported("the row table holds {} values through a schema registry (thaw.row.value-format): "
                               "Thaw reads avro, protobuf and json-schema",
                               format);
  }
  const std::string message = md.Property("thaw.row.proto-message");
  ASSIGN_OR_RAISE(auto texts, SchemaTextsById(md.properties, format));
  ASSIGN_OR_RAISE(auto refs, ReferencesById(md.properties));
  for (const auto& [id, text] : texts) {
    auto codec = ResolveFramed(format, text, message, l->value_json[0].type, refs[id]);
    if (codec.ok()) {
      l->value_by_id[id] = std::move(*codec);
    } else {
      l->value_unresolved[id] = codec.status().message();
    }
  }
  return Status::OK();
}

// The value a layout's decoded columns make, as one struct: a single
// struct column (value_json_unwrap) minus the writers' "__raw__"-style
// internals (Bufstream's __raw__, __prefix__, __err__, which the JSON rows
// leave out too), else the top-level columns as its fields (*wrap).
static Result<iceberg::TypePtr> ValueStructOf(const Schema& schema, const Layout& l, bool* wrap) {
  *wrap = false;
  if (l.value_json_unwrap && l.value_json.size() == 1 && l.value_json[0].type->id == TypeId::kStruct) {
    auto t = std::make_shared<iceberg::Type>(*l.value_json[0].type);
    std::erase_if(t->fields, [](const iceberg::NestedField& f) { return f.name.rfind("__", 0) == 0; });
    if (t->fields.empty()) {
      return Status::Invalid("the value struct '{}' holds only writer internals (__raw__, ...): nothing to encode",
                             l.value_json[0].dotted());
    }
    return iceberg::TypePtr(t);
  }
  auto t = std::make_shared<iceberg::Type>();
  t->id = TypeId::kStruct;
  for (const auto& c : l.value_json) {
    const auto* f = schema.FindById(c.field_id());
    if (c.ids.size() != 1 || !f) {
      return Status::Invalid("value column '{}' is nested: the Avro encoding takes top-level columns", c.dotted());
    }
    t->fields.push_back(*f);
  }
  *wrap = true;
  return iceberg::TypePtr(t);
}

// The value columns re-encoded as Avro (LayoutOptions::value_avro).
static Status BindValueAvro(const Schema& schema, ValueAvroChooser& chooser, Layout* l) {
  ASSIGN_OR_RAISE(iceberg::TypePtr value, ValueStructOf(schema, *l, &l->value_avro_wrap));
  ASSIGN_OR_RAISE(auto choice, chooser.Choose(value));
  auto avro = AvroValueSchema::Resolve(choice.schema_json, value, choice.references);
  if (!avro.ok()) {
    return avro.status().WithContext(fmt::format("the value columns of layout '{}' cannot be encoded with the "
                                                 "chosen Avro schema",
                                                 l->name));
  }
  l->value_avro = std::move(*avro);
  l->value_avro_schema_id = choice.schema_id;
  return Status::OK();
}

// The JSON rows framed with a JSON Schema's registry id (--value-format
// json-schema): the rows stay what JsonRowBuilder writes; the chooser
// checks that the schema takes them.
static Status BindValueJsonSchema(const Schema& schema, ValueAvroChooser& chooser, Layout* l) {
  bool wrap = false;
  ASSIGN_OR_RAISE(iceberg::TypePtr value, ValueStructOf(schema, *l, &wrap));
  ASSIGN_OR_RAISE(auto choice, chooser.Choose(value));
  l->value_json_frame_id = choice.schema_id;  // none in a dry run that would register it
  return Status::OK();
}

// The value struct re-encoded as Protobuf (--value-format protobuf): the
// chosen message resolved against it by field name.
static Status BindValueProtobuf(const Schema& schema, ValueAvroChooser& chooser, Layout* l) {
  ASSIGN_OR_RAISE(iceberg::TypePtr value, ValueStructOf(schema, *l, &l->value_avro_wrap));
  ASSIGN_OR_RAISE(auto choice, chooser.Choose(value));
  auto codec = ResolveFramed("protobuf", choice.schema_json, choice.message_name, value, choice.references);
  if (!codec.ok()) {
    return codec.status().WithContext(fmt::format(
        "the value columns of layout '{}' cannot be encoded as message {}", l->name, choice.message_name));
  }
  l->value_framed = std::move(*codec);
  l->value_framed_id = choice.schema_id;
  return Status::OK();
}

Result<Layout> ResolveLayout(const iceberg::TableMetadata& md, const Schema& schema, const LayoutOptions& options) {
  std::string name = options.forced ? *options.forced : DetectName(md, schema);
  ASSIGN_OR_RAISE(Layout l, Build(name, schema));
  for (const auto& [field, column] : options.column_overrides) {
    auto p = Find(schema, column);
    if (!p) {
      return Status::NotFound("--column {}={}: the table has no column '{}'", field, column, column);
    }
    for (const auto& [name, c] : l.KafkaColumns()) {
      if (field == name) *c = p;
    }
    if (field == "headers") {
      l.header_shape = p->type->id == TypeId::kMap ? HeaderShape::kMap : HeaderShape::kListOfStructs;
    }
  }
  // Every Kafka layout but `plain` needs an offset column: without it there
  // is no link to the source position.
  if (l.name != "plain" && !l.offset) {
    return Status::NotFound(
        "table has no usable offset column for layout '{}' (expected {}): name it with "
        "--column offset=COLUMN, or use --layout plain to number rows in scan order",
        l.name, (l.name == "thaw" || l.name == "thaw-row") ? "'kafka_offset'" : "the layout's offset column");
  }
  auto check_int = [&](const std::optional<ColumnPath>& c, const char* what) -> Status {
    if (!c) return Status::OK();
    auto id = c->type->id;
    if (id != TypeId::kInt && id != TypeId::kLong) {
      return Status::Invalid("{} column '{}' has type {}, expected int or long", what, c->dotted(),
                             c->type->ToString());
    }
    return Status::OK();
  };
  RETURN_NOT_OK(check_int(l.offset, "offset"));
  RETURN_NOT_OK(check_int(l.partition, "partition"));
  RETURN_NOT_OK(check_int(l.timestamp_type, "timestamp_type"));
  if (l.timestamp) {
    auto id = l.timestamp->type->id;
    if (id != TypeId::kLong && id != TypeId::kTimestamp && id != TypeId::kTimestampTz && id != TypeId::kTimestampNs &&
        id != TypeId::kTimestampTzNs) {
      return Status::Invalid("timestamp column '{}' has type {}, expected long (ms) or a timestamp",
                             l.timestamp->dotted(), l.timestamp->type->ToString());
    }
  }
  if (l.name == "thaw-row" && l.value_json.size() == 1 && md.Property("thaw.row.value-schemas") == "registry") {
    RETURN_NOT_OK(BindRegistryValues(md, schema, &l));
  } else if (l.name == "thaw-row" && l.value_json.size() == 1 && md.Property("thaw.row.value-format") == "avro") {
    RETURN_NOT_OK(BindAvroValue(md, &l));
  }
  if (options.value_avro && !l.value_json.empty() && !l.value_avro && !l.value_schema_id) {
    if (options.value_avro->format() == "json-schema") {
      RETURN_NOT_OK(BindValueJsonSchema(schema, *options.value_avro, &l));
    } else if (options.value_avro->format() == "protobuf") {
      RETURN_NOT_OK(BindValueProtobuf(schema, *options.value_avro, &l));
    } else {
      RETURN_NOT_OK(BindValueAvro(schema, *options.value_avro, &l));
    }
  }
  for (const auto& c : l.value_json) {
    const auto* f = schema.FindById(c.field_id());
    if (f && f->initial_default) l.value_json_defaults[c.field_id()] = *f->initial_default;
    RETURN_NOT_OK(CheckInitialDefaults(c, f ? f->initial_default : std::nullopt));
  }
  for (const auto* c : {&l.key, &l.value, &l.topic}) {
    if (*c && !IsBinaryLike(**c)) {
      return Status::Invalid("column '{}' has type {}, expected binary or string", (*c)->dotted(),
                             (*c)->type->ToString());
    }
  }
  return l;
}

}  // namespace thaw::records

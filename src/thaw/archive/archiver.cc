// `thaw archive`'s driver: the table (loaded, checked, or created), the Kafka
// sources, per-partition data files, and the commits that make them visible
// together with the next offsets (archiver.h, docs/archive.md).
#include "thaw/archive/archiver.h"
#include "thaw/archive/archive_metrics.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <tuple>

#include "thaw/archive/background_merge.h"
#include "thaw/archive/maintain_plan.h"
#include "thaw/archive/row_avro.h"
#include "thaw/archive/row_registry.h"
#include "thaw/archive/row_value.h"
#include "thaw/common/log.h"
#include "thaw/iceberg/manifest.h"
#include "thaw/iceberg/manifest_merge.h"
#include "thaw/iceberg/manifest_writer.h"
#include "thaw/iceberg/table_update.h"
#include "thaw/parquet/data_file_writer.h"
#include "thaw/records/layout.h"

namespace thaw::archive {

namespace {

using Clock = std::chrono::steady_clock;

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string TrimSlash(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

std::string JoinNs(const std::vector<std::string>& ns) {
  std::string out;
  for (const auto& n : ns) out += (out.empty() ? "" : ".") + n;
  return out;
}

int64_t RecordBytes(const records::RecordBatch& b, const records::Record& r) {
  int64_t n = (r.key ? r.key->size() : 0) + (r.value ? r.value->size() : 0);
  for (const auto& h : b.HeadersOf(r)) n += h.key.size() + (h.value ? h.value->size() : 0);
  return n;
}

std::string Mb(int64_t bytes) { return fmt::format("{:.1f} MB", bytes / 1e6); }

// "t: 0:12 1:40" (at most 16 partitions shown).
std::string DescribeOffsets(const TopicOffsets& offsets) {
  std::string out;
  int shown = 0;
  for (const auto& [topic, parts] : offsets) {
    out += (out.empty() ? "" : "; ") + topic + ":";
    for (const auto& [p, next] : parts) {
      if (shown++ == 16) {
        out += " ...";
        return out;
      }
      out += fmt::format(" {}:{}", p, next);
    }
  }
  return out.empty() ? "none" : out;
}

// The summary's integer property, if present and numeric.
std::optional<int64_t> SummaryLong(const iceberg::Snapshot* s, const std::string& key) {
  if (!s) return std::nullopt;
  auto it = s->summary.find(key);
  if (it == s->summary.end()) return std::nullopt;
  try {
    size_t used = 0;
    long long v = std::stoll(it->second, &used);
    if (used == it->second.size()) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

const iceberg::Snapshot* MainSnapshot(const iceberg::TableMetadata& md) {
  auto main = md.refs.find("main");
  if (main != md.refs.end()) return md.SnapshotById(main->second.snapshot_id);
  return md.CurrentSnapshot();
}

// The writer id of the newest snapshot on main that records offsets.
std::string LastWriter(const iceberg::TableMetadata& md) {
  std::set<int64_t> seen;
  for (const iceberg::Snapshot* s = MainSnapshot(md); s && seen.insert(s->snapshot_id).second;
       s = s->parent_snapshot_id ? md.SnapshotById(*s->parent_snapshot_id) : nullptr) {
    if (s->summary.count(kNextOffsetsKey)) {
      auto w = s->summary.find(kWriterKey);
      return w == s->summary.end() ? "unknown" : w->second;
    }
  }
  return "unknown";
}

// True when `id` is on main's ancestry (a commit whose outcome was unknown landed).
bool OnMain(const iceberg::TableMetadata& md, int64_t id) {
  std::set<int64_t> seen;
  for (const iceberg::Snapshot* s = MainSnapshot(md); s && seen.insert(s->snapshot_id).second;
       s = s->parent_snapshot_id ? md.SnapshotById(*s->parent_snapshot_id) : nullptr) {
    if (s->snapshot_id == id) return true;
  }
  return false;
}

// A new table: the canonical layout, or the row layout with `value_type`
// (and `key_type`: keys decoded through a registry).
iceberg::TableCreate CanonicalTable(const ArchiveOptions& o, bool with_topic, const iceberg::TypePtr& value_type,
                                    const iceberg::TypePtr& key_type) {
  iceberg::TableCreate c;
  const bool registry = o.value_registry != nullptr;
  c.schema = nlohmann::json::parse(value_type ? RowSchemaJson(with_topic, *value_type, registry, 0, key_type.get())
                                              : parquet::CanonicalSchemaJson(with_topic));
  c.schema["schema-id"] = 0;
  nlohmann::json fields = nlohmann::json::array();
  fields.push_back(
      {{"name", "kafka_partition"}, {"transform", "identity"}, {"source-id", kPartitionFieldId}, {"field-id", 1000}});
  if (with_topic) {
    fields.push_back(
        {{"name", "kafka_topic"}, {"transform", "identity"}, {"source-id", kTopicFieldId}, {"field-id", 1001}});
  }
  c.partition_spec = {{"spec-id", 0}, {"fields", fields}};
  c.sort_order = {
      {"order-id", 1},
      {"fields",
       {{{"transform", "identity"}, {"source-id", 1}, {"direction", "asc"}, {"null-order", "nulls-first"}},
        {{"transform", "identity"}, {"source-id", 2}, {"direction", "asc"}, {"null-order", "nulls-first"}}}}};
  c.properties["thaw.layout"] = value_type ? kRowLayoutValue : "thaw/1";
  c.properties[kOrderedFilesKey] = "true";
  // Tables read through a registry get their format properties from RegistryValueType::properties().
  if (value_type) c.properties[kValueFormatKey] = o.value_avro_schema.empty() ? "json" : "avro";
  if (value_type && !o.value_avro_schema.empty()) {
    c.properties[kAvroSchemaKey] = o.value_avro_schema;
    if (o.value_avro_schema_id) c.properties[kAvroSchemaIdKey] = std::to_string(*o.value_avro_schema_id);
  }
  if (!with_topic) c.properties["thaw.source.topic"] = o.topics.front();
  c.properties["write.parquet.compression-codec"] = "zstd";
  c.format_version = o.format_version;
  if (!o.warehouse.empty()) {
    c.location = TrimSlash(o.warehouse) + "/" + JoinNs(o.table.ns) + ".db/" + o.table.name;
  }
  return c;
}

struct FileKey {
  std::string topic;
  int32_t partition = 0;
  bool operator<(const FileKey& o) const { return std::tie(topic, partition) < std::tie(o.topic, o.partition); }
};

struct OpenFile {
  std::unique_ptr<parquet::DataFileWriter> writer;
  std::string location;
  int64_t last_written = 0;      // written_bytes() when last seen
  int64_t flushed_appended = 0;  // appended_bytes() when a row group was last written (about: what left memory)
  int64_t counted = 0;           // buffered() as last added to the archiver's total
  int64_t buffered() const { return writer->appended_bytes() - flushed_appended; }
};

// Work for a writer thread: append records [begin, end) of `batch` (one
// partition's run) to that partition's open file, or close every open file.
struct WriteTask {
  enum class Kind { kAppend, kRollAll } kind = Kind::kAppend;
  FileKey key;
  std::shared_ptr<const records::RecordBatch> batch;
  size_t begin = 0, end = 0;
  int64_t bytes = 0;  // counted in flight until the task is done
};

// A writer thread and the data files it owns: every file of a (topic,
// partition) is written by the same thread, so its records stay in offset
// order. `open` and `finished` are touched by that thread only, and by the
// loop's thread while every writer is idle.
struct Writer {
  std::thread thread;
  std::condition_variable wake;
  std::deque<WriteTask> tasks;  // guarded by Archiver::mu_
  std::map<FileKey, OpenFile> open;
  std::vector<iceberg::DataFile> finished;
  std::unique_ptr<RowValueDecoder> row_decoder;  // row layout: one per writer (decoders keep state)
};

struct Source {
  std::string topic;
  std::unique_ptr<KafkaSource> kafka;
};

class Archiver {
 public:
  Archiver(catalog::Catalog& catalog, const ArchiveOptions& o) : catalog_(catalog), o_(o) {}
  ~Archiver() { StopWriters(); }

  Result<ArchiveSummary> Run() {
    start_ = Clock::now();
    summary_.table = o_.table.ToString();
    run_id_ = iceberg::NewUuid();
    RETURN_NOT_OK(CheckOptions());
    RETURN_NOT_OK(LoadTable());
    RETURN_NOT_OK(OpenSources());
    if (o_.dry_run) return Plan();
    if (!table_) {
      iceberg::TypePtr value_type, key_type;
      if (o_.layout == Layout::kRow) {
        std::vector<std::string_view> values, keys;
        if (!avro_ || o_.key_registry) {
          RETURN_NOT_OK(PollSamples(&values, &keys));
          // Stopped (SIGINT/SIGTERM) before a sample came: nothing to create.
          if (o_.stop && o_.stop->load() && ((!avro_ && values.empty()) || (o_.key_registry && keys.empty()))) {
            summary_.interrupted = true;
            summary_.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
            return summary_;
          }
        }
        if (avro_) {
          value_type = avro_->iceberg_type();
        } else {
          ASSIGN_OR_RAISE(value_type, o_.value_registry ? InferRegistryType(values, /*key=*/false, kFirstValueFieldId)
                                                        : InferValueType(values));
        }
        if (o_.key_registry) {
          ASSIGN_OR_RAISE(key_type, InferRegistryType(keys, /*key=*/true, MaxFieldId(*value_type) + 1));
        }
      }
      RETURN_NOT_OK(CreateTable(value_type, key_type));
    }
    RETURN_NOT_OK(PrepareWriting());
    for (const auto& src : sources_) {
      std::string from, to;
      for (const auto& [p, off] : src.kafka->start_offsets()) from += fmt::format(" {}:{}", p, off);
      for (const auto& [p, off] : src.kafka->stop_offsets()) to += fmt::format(" {}:{}", p, off);
      log::Info("archiving topic {} into table {} from offsets{}{}", src.topic, o_.table.ToString(), from,
                o_.follow ? " (following)" : " up to" + (to.empty() ? std::string(" the end") : to));
    }
    Status st = Loop();
    if (!st.ok()) {
      AbortOpenFiles();
      return st;
    }
    summary_.next_offsets = committed_;
    summary_.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    return summary_;
  }

 private:
  // --dry-run: where each partition would start and stop; nothing written.
  ArchiveSummary Plan() {
    summary_.dry_run = true;
    summary_.table_exists = table_.has_value();
    for (const auto& src : sources_) {
      const auto resumed = committed_.find(src.topic);
      for (const auto& [p, from] : src.kafka->start_offsets()) {
        PlannedPartition pp;
        pp.topic = src.topic;
        pp.partition = p;
        pp.from = from;
        if (auto it = src.kafka->stop_offsets().find(p); it != src.kafka->stop_offsets().end()) pp.to = it->second;
        pp.resumed = resumed != committed_.end() && resumed->second.count(p) > 0;
        summary_.plan.push_back(pp);
      }
    }
    return summary_;
  }

  Status CheckOptions() {
    if (o_.topics.empty()) return Status::Invalid("which topic? give --topic NAME[,NAME...]");
    std::set<std::string> uniq(o_.topics.begin(), o_.topics.end());
    if (uniq.size() != o_.topics.size()) return Status::Invalid("--topic names a topic twice");
    for (const auto& t : o_.topics) {
      if (t.empty()) return Status::Invalid("--topic: an empty topic name");
    }
    if (o_.format_version != 2 && o_.format_version != 3) {
      return Status::Invalid("--format-version {}: use 2 or 3", o_.format_version);
    }
    if (o_.commit_interval_ms <= 0) return Status::Invalid("--commit-interval must be positive");
    if (o_.target_file_bytes < (1 << 20)) return Status::Invalid("--target-file-size must be at least 1MiB");
    if (o_.memory_bytes < (4 << 20)) return Status::Invalid("the buffer limit must be at least 4MiB");
    if (o_.value_registry && o_.layout != Layout::kRow) {
      return Status::Invalid(
          "--value-format registry decodes values into the columns of a row table: it needs --layout thaw-row (the "
          "canonical layout keeps every value's bytes as they are)");
    }
    if (o_.key_registry && o_.layout != Layout::kRow) {
      return Status::Invalid(
          "--key-format registry decodes keys into the columns of a row table: it needs --layout thaw-row (the "
          "canonical layout keeps every key's bytes as they are)");
    }
    if (!o_.value_avro_schema.empty() || o_.value_avro_schema_id) {
      if (o_.layout != Layout::kRow) {
        return Status::Invalid("--value-schema describes the values of a row table: it needs --layout thaw-row");
      }
      if (o_.value_avro_schema.empty()) return Status::Invalid("--value-schema-id needs --value-schema FILE.avsc");
      if (o_.value_registry) {
        return Status::Invalid(
            "--value-schema gives one writer schema; --value-format registry reads each value's own: give one of them");
      }
      auto avro = records::AvroValueSchema::Make(o_.value_avro_schema, kFirstValueFieldId);
      if (!avro.ok()) return avro.status().WithContext("--value-schema");
      avro_ = *avro;
      avro_schema_id_ = o_.value_avro_schema_id;
    }
    return Status::OK();
  }

  // A row table of Avro values: its writer schema (and schema id) are the
  // table's; --value-schema, if given, must say the same.
  Status CheckAvroTable(const iceberg::TableMetadata& md, const iceberg::Type& value_type) {
    const std::string name = o_.table.ToString();
    const std::string text = md.Property(kAvroSchemaKey);
    if (text.empty()) {
      return Status::Invalid("table '{}' holds Avro values but has no {} property (docs/layouts.md)", name,
                             kAvroSchemaKey);
    }
    auto table_avro = records::AvroValueSchema::Make(text, kFirstValueFieldId);
    if (!table_avro.ok()) return table_avro.status().WithContext(fmt::format("table '{}' {}", name, kAvroSchemaKey));
    RETURN_NOT_OK((*table_avro)->CheckMatches(value_type).WithContext(fmt::format("table '{}'", name)));
    std::optional<int32_t> table_id;
    if (std::string id = md.Property(kAvroSchemaIdKey); !id.empty()) {
      try {
        table_id = std::stoi(id);
      } catch (const std::exception&) {
        return Status::Invalid("table '{}': {} '{}' is not a number", name, kAvroSchemaIdKey, id);
      }
    }
    if (avro_ && (avro::SchemaToJson(avro_->avro_schema()) != avro::SchemaToJson((*table_avro)->avro_schema()) ||
                  avro_schema_id_ != table_id)) {
      return Status::Invalid(
          "table '{}' holds Avro values of another writer schema{} ({} / {}): archive into it without "
          "--value-schema, or into a new table (--create)",
          name, table_id ? fmt::format(" (schema id {})", *table_id) : std::string(), kAvroSchemaKey, kAvroSchemaIdKey);
    }
    avro_ = *table_avro;
    avro_schema_id_ = table_id;
    return Status::OK();
  }

  Status LoadTable() {
    auto t = catalog_.LoadTable(o_.table);
    if (t.ok()) {
      table_ = std::move(*t);
      return CheckTable();
    }
    if (t.status().code() != StatusCode::kNotFound) return t.status();
    if (!o_.create) {
      return Status::NotFound(
          "{}; give --create to create it (with --warehouse URI when the catalog has no "
          "warehouse property)",
          t.status().message());
    }
    return Status::OK();  // created once the topics are known to exist
  }

  // A table archive may write: Thaw's layout, the canonical columns by field
  // id, partitioned by identity(kafka_partition) (and kafka_topic), and, if
  // it holds data, offsets that archive committed.
  Status CheckTable() {
    const auto& md = table_->metadata;
    const std::string name = o_.table.ToString();
    const iceberg::Schema& schema = md.current_schema();
    auto layout = records::ResolveLayout(md, schema, {});
    std::string layout_name = layout.ok() ? layout->name : "unknown";
    const bool row = o_.layout == Layout::kRow;
    if (layout_name != (row ? "thaw-row" : "thaw")) {
      if (layout_name == "thaw" || layout_name == "thaw-row") {
        return Status::Invalid(
            "table '{}' has Thaw's {} layout (docs/layouts.md): archive into it with --layout {}, or give a new "
            "table name with --create",
            name, layout_name == "thaw" ? "canonical" : "row", layout_name);
      }
      return Status::Invalid(
          "table '{}' has the '{}' layout (docs/layouts.md), not Thaw's {} one: archive "
          "appends only to tables in its own layout; give a new table name with --create",
          name, layout_name, row ? "row" : "canonical");
    }
    has_topic_column_ = schema.FindById(kTopicFieldId) != nullptr;
    if (row) {
      const iceberg::NestedField* value = schema.FindById(kValueFieldId);
      if (!value || value->name != "value" || !value->type || value->type->id != iceberg::TypeId::kStruct) {
        return Status::Invalid("table '{}': the row layout's column 12 'value' (a struct) is missing (docs/layouts.md)",
                               name);
      }
      const std::string format = md.Property(kValueFormatKey, "json");
      const bool registry_table = md.Property(kValueSchemasKey) == "registry";
      RETURN_NOT_OK(CheckRegistryOption(registry_table, o_.value_registry != nullptr, /*key=*/false));
      if (registry_table) {
        if (!schema.FindById(kValueSchemaIdFieldId)) {
          return Status::Invalid("table '{}': the row layout's column 13 'value_schema_id' is missing (docs/layouts.md)",
                                 name);
        }
        value_type_ = value->type;
        if (format != "avro" && format != "protobuf" && format != "json-schema") {
          return Status::Unsupported("table '{}' holds {} values ({}={}): archive reads avro, protobuf and "
                                     "json-schema values through a registry",
                                     name, format, kValueFormatKey, format);
        }
        if (format == "protobuf" && md.Property(kProtoMessageKey).empty()) {
          return Status::Invalid("table '{}' holds Protobuf values but has no {} property (docs/layouts.md)", name,
                                 kProtoMessageKey);
        }
        values_.schemas = std::make_shared<RegistrySchemas>(o_.value_registry, value_type_, format,
                                                              md.Property(kProtoMessageKey));
        RETURN_NOT_OK(values_.schemas->Load(md.properties).WithContext(fmt::format("table '{}'", name)));
      } else if (format == "avro") {
        RETURN_NOT_OK(CheckAvroTable(md, *value->type));
      } else if (format != "json") {
        return Status::Unsupported("table '{}' holds {} values ({}={}): archive writes json and avro row tables", name,
                                   format, kValueFormatKey, format);
      } else if (avro_) {
        return Status::Invalid(
            "table '{}' holds JSON values ({}=json): --value-schema is for a new table of Avro values (--create "
            "with another table name)",
            name, kValueFormatKey);
      }
      value_type_ = value->type;
      RETURN_NOT_OK(CheckKeyColumns(md, schema));
      if (format == "json") {  // the JSON codec can fill every field type of the table's value struct
        auto codec = MakeValueCodec(format, value_type_, md.properties);
        if (!codec.ok()) return codec.status().WithContext(fmt::format("table '{}'", name));
      }
    }
    ASSIGN_OR_RAISE(auto canonical, iceberg::Schema::FromJson(
                                        nlohmann::json::parse(row ? RowSchemaJson(has_topic_column_, *value_type_,
                                                                                  o_.value_registry != nullptr, 0,
                                                                                  key_type_.get())
                                                                  : parquet::CanonicalSchemaJson(has_topic_column_))));
    for (const auto& want : canonical.fields()) {
      if (want.id == kValueFieldId || want.id == kKeyDecodedFieldId) continue;  // the table's own types
      const iceberg::NestedField* got = schema.FindById(want.id);
      if (!got || got->name != want.name || got->type->ToString() != want.type->ToString()) {
        return Status::Invalid(
            "table '{}': column id {} is {} where Thaw's layout has '{}' {} (docs/layouts.md): "
            "archive writes only into tables it created; give a new table name with --create",
            name, want.id, got ? fmt::format("'{}' {}", got->name, got->type->ToString()) : std::string("missing"),
            want.name, want.type->ToString());
      }
    }
    if (o_.topics.size() > 1 && !has_topic_column_) {
      return Status::Invalid(
          "table '{}' holds one topic (no kafka_topic column); archive several topics into a new "
          "table (--create)",
          name);
    }
    const std::string source_topic = md.Property("thaw.source.topic");
    if (!has_topic_column_ && !source_topic.empty() && source_topic != o_.topics.front()) {
      return Status::Invalid(
          "table '{}' archives topic '{}' (property thaw.source.topic), not '{}': one table per "
          "topic; give another table name",
          name, source_topic, o_.topics.front());
    }
    const iceberg::PartitionSpec* spec = md.SpecById(md.default_spec_id);
    bool spec_ok = spec != nullptr && !spec->fields.empty();
    if (spec) {
      for (const auto& f : spec->fields) {
        if (f.transform.kind != iceberg::TransformKind::kIdentity ||
            (f.source_id() != kPartitionFieldId && !(has_topic_column_ && f.source_id() == kTopicFieldId))) {
          spec_ok = false;
        }
      }
    }
    if (!spec_ok) {
      return Status::Invalid(
          "table '{}': its partition spec {} is not identity(kafka_partition){} as archive writes "
          "(docs/layouts.md); give a new table name with --create",
          name, md.default_spec_id, has_topic_column_ ? " + identity(kafka_topic)" : "");
    }
    ASSIGN_OR_RAISE(committed_, ReadNextOffsets(md));
    const iceberg::Snapshot* current = MainSnapshot(md);
    if (committed_.empty() && current && SummaryLong(current, "total-records").value_or(1) > 0) {
      if (md.Property(kOrderedFilesKey) != "true") {
        return Status::Invalid(
            "table '{}' has Thaw's layout but holds data without archive offsets (no snapshot on "
            "main has {}): it was written by another tool; archive resumes only from its own "
            "offsets and would duplicate or skip records; give a new table name with --create (if archive "
            "wrote it and another engine's maintenance expired its snapshots, set the table property {}=true "
            "to resume from the offsets its data files hold)",
            name, kNextOffsetsKey, kOrderedFilesKey);
      }
      // Archived by Thaw, then compacted and expired by another engine: the
      // offsets the files prove, never --from-offset.
      auto proved = NextOffsetsFromData(table_->io, md, *current, o_.topics.front());
      if (!proved.ok()) {
        return proved.status().WithContext(fmt::format(
            "table '{}': no snapshot on main has {} (expired after another engine's maintenance), and the offsets "
            "its data files hold",
            name, kNextOffsetsKey));
      }
      committed_ = *proved;
      from_data_ = committed_;
      log::Info(
          "table {}: no snapshot on main carries {} (expired after another engine's maintenance); resuming from "
          "the offsets its data files hold: {}",
          name, kNextOffsetsKey, DescribeOffsets(committed_));
    }
    for (const auto& [topic, parts] : committed_) {
      if (std::find(o_.topics.begin(), o_.topics.end(), topic) == o_.topics.end() && !has_topic_column_) {
        return Status::Invalid("table '{}' archives topic '{}', not '{}': one table per topic", name, topic,
                               o_.topics.front());
      }
    }
    return Status::OK();
  }

  // A table holds values (keys) decoded through a registry exactly when
  // --value-format (--key-format) registry says so.
  Status CheckRegistryOption(bool table_has, bool option_has, bool key) const {
    const char* what = key ? "keys" : "values";
    const char* option = key ? "--key-format" : "--value-format";
    const char* property = key ? kKeySchemasKey : kValueSchemasKey;
    if (table_has && !option_has) {
      return Status::Invalid(
          "table '{}' holds {} decoded through a schema registry ({}=registry): archive into it with {} registry "
          "--schema-registry URL",
          o_.table.ToString(), what, property, option);
    }
    if (!table_has && option_has) {
      return Status::Invalid(
          "table '{}' does not hold {} decoded through a schema registry (no {}=registry): {} registry is for a new "
          "table (--create with another table name)",
          o_.table.ToString(), what, property, option);
    }
    return Status::OK();
  }

  // A row table's decoded keys (--key-format registry): the table says it
  // holds them exactly when the option is given, with its columns 14 and 15.
  Status CheckKeyColumns(const iceberg::TableMetadata& md, const iceberg::Schema& schema) {
    const std::string name = o_.table.ToString();
    const bool key_table = md.Property(kKeySchemasKey) == "registry";
    RETURN_NOT_OK(CheckRegistryOption(key_table, o_.key_registry != nullptr, /*key=*/true));
    if (!key_table) return Status::OK();
    const iceberg::NestedField* key = schema.FindById(kKeyDecodedFieldId);
    if (!key || key->name != "key_decoded" || !key->type || key->type->id != iceberg::TypeId::kStruct) {
      return Status::Invalid(
          "table '{}': the row layout's column 14 'key_decoded' (a struct) is missing (docs/layouts.md)", name);
    }
    const std::string format = md.Property(kKeyFormatKey);
    if (format.empty()) {
      return Status::Invalid("table '{}' holds decoded keys but has no {} property (docs/layouts.md)", name,
                             kKeyFormatKey);
    }
    if (format != "avro" && format != "protobuf" && format != "json-schema") {
      return Status::Unsupported("table '{}' holds keys of format '{}' ({}): archive reads avro, protobuf and "
                                 "json-schema keys through a registry",
                                 name, format, kKeyFormatKey);
    }
    if (format == "protobuf" && md.Property(kKeyProtoMessageKey).empty()) {
      return Status::Invalid("table '{}' holds Protobuf keys but has no {} property (docs/layouts.md)", name,
                             kKeyProtoMessageKey);
    }
    key_type_ = key->type;
    keys_.schemas = std::make_shared<RegistrySchemas>(o_.key_registry, key_type_, format,
                                                     md.Property(kKeyProtoMessageKey), /*key=*/true);
    return keys_.schemas->Load(md.properties).WithContext(fmt::format("table '{}'", name));
  }

  Status OpenSources() {
    for (const auto& topic : o_.topics) {
      SourceOptions so;
      so.kafka = o_.kafka;
      so.kafka.stop = o_.stop;
      so.topic = topic;
      so.partitions = o_.partitions;
      auto c = committed_.find(topic);
      if (c != committed_.end()) so.resume = c->second;
      so.from = o_.from;
      so.follow = o_.follow;
      so.group_id = o_.group_id;
      so.timeout_ms = o_.timeout_ms;
      ASSIGN_OR_RAISE(auto src, KafkaSource::Make(so));
      sources_.push_back(Source{topic, std::move(src)});
    }
    return Status::OK();
  }

  // The row layout's value type for a new table, from the first records
  // (up to kInferenceRecords values, the buffer limit, the end of the topics
  // without --follow, or a commit interval once one value is there). The
  // records polled stay in pending_ and are archived first. Null when a
  // stop came before any value.
  Result<iceberg::TypePtr> InferValueType(const std::vector<std::string_view>& samples) {
    auto type = InferJsonValueType(samples);
    if (!type.ok()) {
      return Status(type.status().code(),
                    fmt::format("table '{}' (--layout thaw-row): {}", o_.table.ToString(), type.status().message()));
    }
    log::Info("table {}: value columns inferred from {} records: {}", o_.table.ToString(), samples.size(),
              (*type)->ToString());
    return type;
  }

  // --value-format registry (--key-format registry): the value (key) type
  // of a new table is the writer schema of the first framed value (key)
  // among the first records, its field ids from `first_field_id`.
  Result<iceberg::TypePtr> InferRegistryType(const std::vector<std::string_view>& samples, bool key,
                                             int32_t first_field_id) {
    const char* what = key ? "key" : "value";
    Status last = Status::OK();
    for (std::string_view v : samples) {
      auto id = records::ConfluentSchemaId(v);
      if (!id) continue;
      auto t = RegistrySchemas::NewTableType(*RegistryOf(key), *id, v, first_field_id, key);
      if (t.ok()) {
        log::Info("table {}: {} columns from schema id {} of the schema registry ({}{}): {}", o_.table.ToString(),
                  what, *id, t->format, t->message_name.empty() ? "" : " message " + t->message_name,
                  t->type->ToString());
        Through(key).created = *t;
        return t->type;
      }
      if (t.status().code() != StatusCode::kUnsupported && t.status().code() != StatusCode::kInvalidArgument) {
        return t.status().WithContext(fmt::format("table '{}'", o_.table.ToString()));
      }
      last = t.status();
    }
    return Status::NotFound(
        "table '{}' (--layout thaw-row --{}-format registry): none of the first {} {}s is {}; archive this topic {}",
        o_.table.ToString(), what, samples.size(), what,
        last.ok() ? "framed for a schema registry (magic byte 0 and a 4-byte schema id)"
                  : fmt::format("a {} the table can hold ({})", what, last.message()),
        key ? "without --key-format registry (keys are kept as bytes in the key column either way)"
            : "with --layout thaw (values kept as they are) or --value-format json");
  }

  // Polls the first records of a new row table (up to kInferenceRecords
  // values, the buffer limit, the end of the topics without --follow, or a
  // commit interval once one value is there) into `samples` (their values)
  // and `keys`; the records stay in inferred_ and are archived first.
  Status PollSamples(std::vector<std::string_view>* samples, std::vector<std::string_view>* keys) {
    int64_t pending_bytes = 0;
    const auto start = Clock::now();
    const int64_t poll_bytes = std::clamp<int64_t>(o_.memory_bytes / 8, 1 << 20, 16 << 20);
    while (samples->size() < kInferenceRecords && pending_bytes < o_.memory_bytes / 2) {
      if (o_.stop && o_.stop->load()) break;
      bool done = !o_.follow;
      for (const auto& s : sources_) done = done && s.kafka->Done();
      if (done) break;
      if (!samples->empty() && Clock::now() - start >= std::chrono::milliseconds(o_.commit_interval_ms)) break;
      for (auto& s : sources_) {
        if (!o_.follow && s.kafka->Done()) continue;
        records::RecordBatch batch;
        Status polled = s.kafka->Poll(&batch, poll_bytes, std::chrono::milliseconds(100));
        for (const auto& r : batch.records) {
          pending_bytes += RecordBytes(batch, r);
          if (r.value && samples->size() < kInferenceRecords) samples->push_back(*r.value);
          if (r.key && keys->size() < kInferenceRecords) keys->push_back(*r.key);
        }
        if (!batch.records.empty()) inferred_.emplace_back(s.topic, std::move(batch));
        if (!polled.ok()) return polled;
      }
    }
    return Status::OK();
  }

  Status CreateTable(const iceberg::TypePtr& value_type, const iceberg::TypePtr& key_type) {
    has_topic_column_ = o_.topics.size() > 1;
    value_type_ = value_type;
    key_type_ = key_type;
    iceberg::TableCreate create = CanonicalTable(o_, has_topic_column_, value_type, key_type);
    for (bool key : {false, true}) {
      if (!RegistryOf(key)) continue;
      for (const auto& [k, v] : Through(key).created.properties()) create.properties[k] = v;
    }
    auto t = catalog_.CreateTable(o_.table, create);
    if (t.ok()) {
      table_ = std::move(*t);
      log::Info("created table {} at {}", o_.table.ToString(), table_->metadata.location);
      for (bool key : {false, true}) {
        if (!RegistryOf(key)) continue;
        const RegistryValueType& c = Through(key).created;
        Through(key).schemas =
            std::make_shared<RegistrySchemas>(RegistryOf(key), c.type, c.format, c.message_name, key);
      }
      return Status::OK();
    }
    if (t.status().code() != StatusCode::kAlreadyExists) {
      return Status(t.status().code(),
                    fmt::format("creating table '{}': {}", o_.table.ToString(), t.status().message()));
    }
    // Created meanwhile (another archiver): load it and check it as any other.
    ASSIGN_OR_RAISE(table_, catalog_.LoadTable(o_.table));
    TopicOffsets before = committed_;
    RETURN_NOT_OK(CheckTable());
    if (committed_ != before) {
      return Status::CommitConflict(
          "table '{}' was created by another writer (thaw.archive.writer={}) that already "
          "committed offsets; run one archiver per table, then rerun",
          o_.table.ToString(), LastWriter(table_->metadata));
    }
    return Status::OK();
  }

  Status PrepareWriting() {
    const auto& md = table_->metadata;
    std::string location = TrimSlash(md.location);
    data_root_ = TrimSlash(md.Property("write.data.path", location + "/data"));
    metadata_root_ = TrimSlash(md.Property("write.metadata.path", location + "/metadata"));
    const iceberg::PartitionSpec* spec = md.SpecById(md.default_spec_id);
    if (!spec) return Status::Corrupt("table '{}': no partition spec {}", o_.table.ToString(), md.default_spec_id);
    // Copies: table_ is replaced by every commit.
    spec_ = *spec;
    schema_ = md.current_schema();
    // Iceberg's write.parquet.compression-level, as Iceberg Java honours it
    // (absent: zstd's level 3, parquet-java's and Iceberg Java's default).
    const std::string level = md.Property("write.parquet.compression-level");
    if (!level.empty()) {
      int v = 0;
      auto [ptr, ec] = std::from_chars(level.data(), level.data() + level.size(), v);
      if (ec != std::errc() || ptr != level.data() + level.size() || v < 1 || v > 22) {
        return Status::Invalid(
            "table '{}': property write.parquet.compression-level is '{}', not a zstd level (1-22); fix it with "
            "your catalog's ALTER TABLE ... SET TBLPROPERTIES, or remove it for the default (3)",
            o_.table.ToString(), level);
      }
      zstd_level_ = v;
    }
    io_ = table_->io;
    // Rows are in the table's sort order when it is the one archive writes in.
    if (auto text = iceberg::ReadMetadataText(table_->metadata_location, *io_); text.ok()) {
      sort_order_id_ = FileSortOrderId(*text);
    }
    size_t partitions = 0;
    for (const auto& s : sources_) partitions += s.kafka->start_offsets().size();
    // Row groups small enough that every partition's open one fits the buffer
    // limit twice over; the limit forces a commit before memory grows past it.
    // And at most a quarter of the target size, so that files roll (by the
    // bytes written) near it.
    row_group_bytes_ = std::clamp<int64_t>(o_.memory_bytes / static_cast<int64_t>(2 * std::max<size_t>(1, partitions)),
                                           1 << 20, 64 << 20);
    row_group_bytes_ = std::max<int64_t>(1 << 20, std::min(row_group_bytes_, o_.target_file_bytes / 4));
    for (const auto& s : sources_) {
      for (const auto& [p, off] : s.kafka->start_offsets()) started_[s.topic][p] = off;
    }
    return Status::OK();
  }

  // The next offsets of the partitions this run reads.
  TopicOffsets Positions() const {
    TopicOffsets out;
    for (const auto& s : sources_) {
      auto& dst = out[s.topic];
      for (const auto& [p, off] : s.kafka->start_offsets()) dst[p] = off;
      for (const auto& [p, off] : s.kafka->positions()) dst[p] = off;
    }
    return out;
  }

  // `base` (the offsets a table holds) with this run's positions over it:
  // what a commit records, every partition archived so far.
  static TopicOffsets Overlay(TopicOffsets base, const TopicOffsets& ours) {
    for (const auto& [topic, parts] : ours) {
      for (const auto& [p, off] : parts) base[topic][p] = off;
    }
    return base;
  }

  TopicOffsets NextOffsets() const { return Overlay(committed_, Positions()); }

  Status Loop() {
    RETURN_NOT_OK(StartWriters());
    // Records polled to infer a new row table's value type go first.
    for (auto& [topic, polled] : inferred_) {
      RETURN_NOT_OK(Dispatch(topic, std::make_shared<records::RecordBatch>(std::move(polled))));
    }
    inferred_.clear();
    // `--from-offset latest` starts where each partition ends at this
    // moment: recorded before anything is consumed, so a run killed before
    // its first interval resumes there and not at a later end (what was
    // produced in between would never be archived).
    if (o_.from.kind == FromOffset::Kind::kLatest && NewPartitions()) RETURN_NOT_OK(Commit());
    auto last_commit = Clock::now();
    auto last_progress = Clock::now();
    auto last_ends = Clock::now() - std::chrono::seconds(1);
    const int64_t poll_bytes = std::clamp<int64_t>(o_.memory_bytes / 8, 1 << 20, 16 << 20);
    while (true) {
      if (o_.stop && o_.stop->load()) {
        summary_.interrupted = true;
        break;
      }
      bool done = !o_.follow;
      for (const auto& s : sources_) done = done && s.kafka->Done();
      if (done) break;
      auto elapsed = Clock::now() - last_commit;
      auto until_commit = std::chrono::milliseconds(o_.commit_interval_ms) -
                          std::chrono::duration_cast<std::chrono::milliseconds>(elapsed);
      auto timeout = std::clamp(until_commit, std::chrono::milliseconds(10), std::chrono::milliseconds(200)) /
                     static_cast<int>(sources_.size());
      for (auto& s : sources_) {
        if (!o_.follow && s.kafka->Done()) continue;
        // A new batch per poll: the writer threads hold it until they appended it.
        auto batch = std::make_shared<records::RecordBatch>();
        const auto polling = Clock::now();
        Status polled = s.kafka->Poll(batch.get(), poll_bytes, timeout);
        times_.poll += Clock::now() - polling;
        // Records returned with an error are still archived: the positions include them.
        RETURN_NOT_OK(Dispatch(s.topic, std::move(batch)));
        if (!polled.ok()) {
          if (o_.stop && o_.stop->load()) break;
          return polled;
        }
      }
      const int64_t buffered = buffered_total_.load() + InFlight();
      const bool interval = Clock::now() - last_commit >= std::chrono::milliseconds(o_.commit_interval_ms);
      if ((interval && (HasData() || NewPartitions())) || buffered >= o_.memory_bytes) {
        if (!interval) ++times_.forced_commits;
        RETURN_NOT_OK(Commit());
        last_commit = Clock::now();
      } else if (interval) {
        last_commit = Clock::now();
      }
      if (metrics_ && Clock::now() - last_ends >= std::chrono::seconds(1)) {
        last_ends = Clock::now();
        for (const auto& s : sources_) metrics_->Ends(s.topic, s.kafka->end_offsets());
      }
      if (o_.progress && Clock::now() - last_progress >= std::chrono::seconds(1)) {
        last_progress = Clock::now();
        Progress();
      }
    }
    // The end, or a stop: what is buffered, and the positions reached (past
    // trailing gaps, and the start offsets of a first run, so a rerun resumes
    // where this one started even when it archived nothing).
    if (HasData() || NextOffsets() != committed_) RETURN_NOT_OK(Commit(/*last=*/true));
    if (o_.progress) Progress();
    StopWriters();
    auto secs = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
    log::Debug(
        "archive loop: {:.2f} s; in Kafka polls {:.2f} s, waiting for writers {:.2f} s, closing files {:.2f} s, "
        "catalog commits {:.2f} s ({} forced by the buffer limit); {} writer threads",
        secs(Clock::now() - start_), secs(times_.poll), secs(times_.backpressure), secs(times_.drain),
        secs(times_.commit), times_.forced_commits, writers_.size());
    if (!writers_.empty() && writers_.front()->row_decoder) {
      RowValueDecoder::Counts n = retired_;
      for (const auto& w : writers_) n += w->row_decoder->counts();
      log::Info("table {}: {} values decoded into columns, {} kept in value_raw ({} {})", o_.table.ToString(),
                n.decoded, n.kept_raw, n.undecodable,
                values_.schemas ? "not framed values of a schema the table takes"
                : avro_           ? "not datums of the Avro schema"
                                  : "not JSON objects");
      if (keys_.schemas) {
        log::Info("table {}: {} keys decoded into key_decoded, {} not (not framed keys of a schema the table takes)",
                  o_.table.ToString(), n.keys_decoded, n.keys_undecodable);
      }
    }
    return Status::OK();
  }

  void Progress() {
    double secs = std::chrono::duration<double>(Clock::now() - start_).count();
    o_.progress(fmt::format("{} records, {} ({:.1f} MB/s), {} commits, {} data files; next offsets {}",
                            summary_.records, Mb(summary_.bytes), secs > 0 ? summary_.bytes / secs / 1e6 : 0.0,
                            summary_.commits, summary_.data_files, DescribeOffsets(NextOffsets())));
  }

  // Partitions the table has no offset for yet: their start offsets are
  // committed at the first interval, so that a restart after a crash resumes
  // there (not at a later `--from-offset latest`).
  bool NewPartitions() const {
    for (const auto& s : sources_) {
      auto t = committed_.find(s.topic);
      for (const auto& [p, off] : s.kafka->start_offsets()) {
        if (t == committed_.end() || !t->second.count(p)) return true;
      }
    }
    return false;
  }

  // Records were handed to the writers since the last commit.
  bool HasData() const { return uncommitted_records_ > 0; }

  // ---- writer threads
  // The loop's thread polls Kafka and hands each partition's run of records
  // to the writer thread owning that partition, which encodes and writes
  // Parquet meanwhile; several partitions are encoded in parallel. Bytes
  // handed over and not yet appended are bounded (the loop waits), and a
  // commit first waits until every writer appended all it was given and
  // closed its files, so the offsets it records are exactly those in the
  // files it commits.
  Status StartWriters() {
    if (!writers_.empty()) return Status::OK();
    size_t partitions = 0;
    for (const auto& s : sources_) partitions += s.kafka->start_offsets().size();
    const size_t n = std::clamp<size_t>(std::thread::hardware_concurrency(), 2, 8);
    const size_t count = std::max<size_t>(1, std::min(n, partitions));
    std::vector<std::unique_ptr<Writer>> made;
    for (size_t i = 0; i < count; ++i) {
      auto w = std::make_unique<Writer>();
      if (o_.layout == Layout::kRow) {
        ASSIGN_OR_RAISE(w->row_decoder, MakeRowDecoder());
      }
      made.push_back(std::move(w));
    }
    writers_ = std::move(made);
    for (auto& w : writers_) {
      Writer* wp = w.get();
      w->thread = std::thread([this, wp] { WriterMain(*wp); });
    }
    log::Debug("archive: {} writer threads", count);
    return Status::OK();
  }

  // A writer's decoder of the row layout's values (and keys) as the table is now.
  Result<std::unique_ptr<RowValueDecoder>> MakeRowDecoder() const {
    std::unique_ptr<ValueCodec> codec;
    if (values_.schemas) {
      codec = MakeRegistryCodec(values_.schemas);
    } else if (avro_) {
      codec = MakeAvroValueCodec(avro_, avro_schema_id_);
    } else {
      ASSIGN_OR_RAISE(codec, MakeJsonValueCodec(value_type_));
    }
    return RowValueDecoder::Make(std::move(codec), keys_.schemas ? MakeRegistryCodec(keys_.schemas) : nullptr);
  }

  // Ends the writer threads (after their queued tasks); abandons nothing else.
  void StopWriters() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      quit_ = true;
      for (auto& w : writers_) w->wake.notify_all();
    }
    for (auto& w : writers_) {
      if (w->thread.joinable()) w->thread.join();
    }
  }

  void WriterMain(Writer& w) {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      w.wake.wait(lock, [&] { return quit_ || !w.tasks.empty(); });
      if (w.tasks.empty()) return;
      WriteTask t = std::move(w.tasks.front());
      w.tasks.pop_front();
      // After a failure, or when the run is being torn down, the rest is dropped.
      const bool skip = !write_error_.ok() || quit_;
      lock.unlock();
      Status st = skip ? Status::OK() : RunTask(w, t);
      t.batch.reset();  // the Kafka messages are released here, not under the lock
      lock.lock();
      if (!st.ok() && write_error_.ok()) write_error_ = st;
      in_flight_ -= t.bytes;
      --pending_;
      idle_.notify_all();
    }
  }

  Status RunTask(Writer& w, const WriteTask& t) {
    if (t.kind == WriteTask::Kind::kRollAll) {
      std::vector<FileKey> keys;
      for (const auto& [k, f] : w.open) keys.push_back(k);
      for (const auto& k : keys) RETURN_NOT_OK(Roll(w, k));
      return Status::OK();
    }
    const records::RecordBatch& batch = *t.batch;
    // In pieces of about a quarter of a row group, so a file rolls near the
    // target size however many records one fetch returned.
    const int64_t piece_bytes = std::max<int64_t>(1, row_group_bytes_ / 4);
    size_t i = t.begin;
    while (i < t.end) {
      size_t j = i;
      int64_t bytes = 0;
      while (j < t.end && (j == i || bytes < piece_bytes)) bytes += RecordBytes(batch, batch.records[j++]);
      ASSIGN_OR_RAISE(OpenFile * f, FileFor(w, t.key.topic, t.key.partition));
      Status st;
      if (w.row_decoder) {
        auto decoded = w.row_decoder->Decode(batch, i, j);
        st = decoded.ok() ? f->writer->AppendDecoded(batch, i, j, *decoded) : decoded.status();
      } else {
        st = f->writer->Append(batch, i, j);
      }
      if (!st.ok()) {
        return Status(st.code(),
                      fmt::format("table '{}': writing {} records of topic {} partition {} (offsets "
                                  "{}..{}) to {}: {}",
                                  o_.table.ToString(), j - i, t.key.topic, t.key.partition, batch.records[i].offset,
                                  batch.records[j - 1].offset, f->location, st.message()));
      }
      if (f->writer->written_bytes() != f->last_written) {
        f->last_written = f->writer->written_bytes();
        f->flushed_appended = f->writer->appended_bytes();
      }
      const int64_t buffered = f->buffered();
      buffered_total_ += buffered - f->counted;
      f->counted = buffered;
      if (f->writer->written_bytes() >= o_.target_file_bytes) RETURN_NOT_OK(Roll(w, t.key));
      i = j;
    }
    return Status::OK();
  }

  Writer& WriterOf(const FileKey& key) {
    const size_t h = std::hash<std::string>{}(key.topic) + static_cast<size_t>(key.partition);
    return *writers_[h % writers_.size()];
  }

  int64_t InFlight() {
    std::lock_guard<std::mutex> lock(mu_);
    return in_flight_;
  }

  // Queues `batch`'s runs of records by partition for their writers; waits
  // while too many bytes are in flight. Fails with a writer's first error.
  // --value-format registry: the writer schema of every id in `batch` is
  // known before its records reach the writers; a schema with fields the
  // table lacks evolves the table first (EvolveTable).
  Status PrepareSchemas(const records::RecordBatch& batch) {
    for (const auto& r : batch.records) {
      if (values_.schemas && r.value) RETURN_NOT_OK(PrepareSchema(*r.value, /*key=*/false));
      if (keys_.schemas && r.key) RETURN_NOT_OK(PrepareSchema(*r.key, /*key=*/true));
    }
    return Status::OK();
  }

  Status PrepareSchema(std::string_view bytes, bool key) {
    auto id = records::ConfluentSchemaId(bytes);
    if (!id || !Through(key).seen.insert(*id).second) return Status::OK();
    iceberg::TypePtr evolved;
    std::string why;
    const int32_t next_field_id = LastColumnId(table_->metadata, value_type_, key_type_) + 1;
    ASSIGN_OR_RAISE(auto outcome, Through(key).schemas->Prepare(*id, next_field_id, &evolved, &why));
    switch (outcome) {
      case RegistrySchemas::Outcome::kKnown:
      case RegistrySchemas::Outcome::kReady:
        break;
      case RegistrySchemas::Outcome::kRefused:
        if (key) {
          log::Warn("table {}: {}; its keys are archived as bytes in key only (key_decoded null)",
                    o_.table.ToString(), why);
        } else {
          log::Warn("table {}: {}; its values are archived as bytes in value_raw", o_.table.ToString(), why);
        }
        break;
      case RegistrySchemas::Outcome::kEvolve:
        RETURN_NOT_OK(EvolveTable(*id, key, evolved));
        break;
    }
    return Status::OK();
  }

  // The writer schemas first seen since the last commit, values' and keys'.
  std::map<std::string, std::string> TakeSchemaProperties() {
    std::map<std::string, std::string> props;
    if (values_.schemas) props = values_.schemas->TakeNewProperties();
    if (keys_.schemas) props.merge(keys_.schemas->TakeNewProperties());
    return props;
  }

  static int32_t MaxFieldId(const iceberg::Type& t) {
    int32_t m = 0;
    for (const auto& f : t.fields) m = std::max({m, f.id, f.type ? MaxFieldId(*f.type) : 0});
    return m;
  }
  // The table's last-column-id once it holds these value and key structs.
  static int32_t LastColumnId(const iceberg::TableMetadata& md, const iceberg::TypePtr& value_type,
                              const iceberg::TypePtr& key_type) {
    return std::max({md.last_column_id, MaxFieldId(*value_type), key_type ? MaxFieldId(*key_type) : 0});
  }

  // A schema change whose value struct (key struct, when `key`) is
  // `new_type` (Iceberg add-schema + set-current-schema, with the writer
  // schemas first seen): the writers first close their files (written under
  // the old schema, committed with the next snapshot: Iceberg reads them by
  // field id), then decode into the new struct. No offsets are committed
  // here: the records polled with this id are not written yet.
  Status EvolveTable(int32_t schema_id, bool key, const iceberg::TypePtr& new_type) {
    const std::string name = o_.table.ToString();
    const char* what = key ? "key" : "value";
    const iceberg::TypePtr& value_type = key ? value_type_ : new_type;
    const iceberg::TypePtr& key_type = key ? new_type : key_type_;
    RETURN_NOT_OK(Drain());
    const std::map<std::string, std::string> props = TakeSchemaProperties();
    for (int attempt = 0;; ++attempt) {
      const iceberg::TableMetadata& md = table_->metadata;
      int32_t new_id = 0;
      for (const auto& sc : md.schemas) new_id = std::max(new_id, sc.schema_id() + 1);
      nlohmann::json schema = nlohmann::json::parse(
          RowSchemaJson(has_topic_column_, *value_type, values_.schemas != nullptr, new_id, key_type.get()));
      const int32_t last_column_id = LastColumnId(md, value_type, key_type);
      std::vector<iceberg::TableRequirement> reqs{iceberg::TableRequirement::AssertTableUuid(md.table_uuid),
                                                  iceberg::TableRequirement::AssertCurrentSchemaId(md.current_schema_id)};
      std::vector<iceberg::TableUpdate> updates{iceberg::TableUpdate::AddSchema(schema, last_column_id),
                                                iceberg::TableUpdate::SetCurrentSchema(-1)};
      if (!props.empty()) updates.push_back(iceberg::TableUpdate::SetProperties(props));
      auto committed = catalog_.CommitTable(o_.table, *table_, reqs, updates);
      if (committed.ok()) {
        table_ = std::move(*committed);
        break;
      }
      const Status& st = committed.status();
      if (st.code() != StatusCode::kCommitConflict || attempt >= 4) {
        return Status(st.code(), fmt::format("table '{}': evolving the {} columns for schema id {}: {}", name, what,
                                             schema_id, st.message()));
      }
      ASSIGN_OR_RAISE(auto reloaded, catalog_.LoadTable(o_.table));
      if (reloaded.metadata.current_schema_id != md.current_schema_id) {
        return Status::CommitConflict(
            "table '{}': another writer changed the schema (to schema {}) while archive evolved it for schema id {}; "
            "rerun archive (nothing of this change was kept)",
            name, reloaded.metadata.current_schema_id, schema_id);
      }
      table_ = std::move(reloaded);  // only others' snapshots moved: retry on them
    }
    log::Info("table {}: {} columns evolved for schema id {} (table schema {}): {}", name, what, schema_id,
              table_->metadata.current_schema_id, new_type->ToString());
    (key ? key_type_ : value_type_) = new_type;
    schema_ = table_->metadata.current_schema();
    RETURN_NOT_OK(Through(key).schemas->SetValueType(new_type));
    // Every writer is idle with no open file (Drain): new decoders on the new struct.
    for (auto& w : writers_) {
      if (w->row_decoder) retired_ += w->row_decoder->counts();
      ASSIGN_OR_RAISE(w->row_decoder, MakeRowDecoder());
    }
    return Status::OK();
  }

  Status Dispatch(const std::string& topic, std::shared_ptr<records::RecordBatch> batch) {
    if (values_.schemas || keys_.schemas) RETURN_NOT_OK(PrepareSchemas(*batch));
    const int64_t limit = std::clamp<int64_t>(o_.memory_bytes / 4, 4 << 20, 64 << 20);
    std::shared_ptr<const records::RecordBatch> shared = std::move(batch);
    const auto& records = shared->records;
    size_t i = 0;
    while (i < records.size()) {
      const int32_t p = records[i].partition;
      int64_t bytes = 0;
      size_t j = i;
      int64_t newest_ts = -1;
      while (j < records.size() && records[j].partition == p) {
        bytes += RecordBytes(*shared, records[j]);
        newest_ts = std::max(newest_ts, records[j].timestamp_ms);
        ++j;
      }
      if (metrics_) metrics_->Polled(topic, p, static_cast<int64_t>(j - i), bytes, newest_ts);
      WriteTask t;
      t.key = FileKey{topic, p};
      t.batch = shared;
      t.begin = i;
      t.end = j;
      t.bytes = bytes;
      Writer& w = WriterOf(t.key);
      {
        std::unique_lock<std::mutex> lock(mu_);
        if (in_flight_ >= limit) {
          const auto waiting = Clock::now();
          idle_.wait(lock, [&] { return in_flight_ < limit || !write_error_.ok(); });
          times_.backpressure += Clock::now() - waiting;
        }
        if (!write_error_.ok()) return write_error_;
        in_flight_ += bytes;
        ++pending_;
        w.tasks.push_back(std::move(t));
        w.wake.notify_one();
      }
      summary_.bytes += bytes;
      summary_.records += static_cast<int64_t>(j - i);
      uncommitted_records_ += static_cast<int64_t>(j - i);
      i = j;
    }
    std::lock_guard<std::mutex> lock(mu_);
    return write_error_;
  }

  // Every writer closes its open files (in parallel); returns once all are
  // idle, with the first error of any.
  Status Drain() {
    std::unique_lock<std::mutex> lock(mu_);
    for (auto& w : writers_) {
      WriteTask t;
      t.kind = WriteTask::Kind::kRollAll;
      ++pending_;
      w->tasks.push_back(std::move(t));
      w->wake.notify_one();
    }
    idle_.wait(lock, [&] { return pending_ == 0; });
    return write_error_;
  }

  Result<OpenFile*> FileFor(Writer& w, const std::string& topic, int32_t partition) {
    FileKey key{topic, partition};
    auto it = w.open.find(key);
    if (it != w.open.end()) return &it->second;
    std::vector<iceberg::Datum> tuple;
    std::string dir = data_root_;
    for (const auto& f : spec_.fields) {
      iceberg::Datum d;
      if (f.source_id() == kPartitionFieldId) {
        d.kind = iceberg::Datum::kInt;
        d.i = partition;
        dir += fmt::format("/{}={}", f.name, partition);
      } else {
        d.kind = iceberg::Datum::kBytes;
        d.s = topic;
        dir += fmt::format("/{}={}", f.name, topic);
      }
      tuple.push_back(std::move(d));
    }
    OpenFile f;
    f.location = fmt::format("{}/{:05d}-{}-{}.parquet", dir, partition, ++file_seq_, run_id_);  // file_seq_ is atomic
    parquet::DataFileWriterOptions wo;
    wo.row_group_bytes = row_group_bytes_;
    wo.zstd_level = zstd_level_;
    if (has_topic_column_) wo.topic = topic;
    auto made = parquet::DataFileWriter::Make(*io_, f.location, *schema_, spec_.spec_id, std::move(tuple), wo);
    if (!made.ok()) {
      return Status(made.status().code(), fmt::format("table '{}': cannot write data file {}: {}", o_.table.ToString(),
                                                      f.location, made.status().message()));
    }
    f.writer = std::move(*made);
    return &w.open.emplace(key, std::move(f)).first->second;
  }

  // Closes a partition's open file; it waits in the writer's `finished` for the next commit.
  Status Roll(Writer& w, const FileKey& key) {
    auto it = w.open.find(key);
    if (it == w.open.end()) return Status::OK();
    OpenFile f = std::move(it->second);
    w.open.erase(it);
    buffered_total_ -= f.counted;
    if (f.writer->record_count() == 0) {
      f.writer->Abort();
      return Status::OK();
    }
    auto df = f.writer->Finish();
    if (!df.ok()) {
      return Status(df.status().code(), fmt::format("table '{}': finishing data file {}: {}", o_.table.ToString(),
                                                    f.location, df.status().message()));
    }
    df->sort_order_id = sort_order_id_;
    w.finished.push_back(std::move(*df));
    return Status::OK();
  }

  void AbortOpenFiles() {
    StopWriters();
    for (auto& w : writers_) {
      for (auto& [k, f] : w->open) f.writer->Abort();
      w->open.clear();
    }
  }

  // The snapshot summary of an append of `files` on `parent`, as Iceberg
  // Java's SnapshotSummary writes it, with the archive's offsets.
  std::map<std::string, std::string> Summary(const iceberg::Snapshot* parent,
                                             const std::vector<iceberg::DataFile>& files, const TopicOffsets& next) {
    int64_t records = 0, bytes = 0;
    std::set<std::vector<std::string>> partitions;
    for (const auto& f : files) {
      records += f.record_count;
      bytes += f.file_size;
      std::vector<std::string> tuple;
      for (const auto& d : f.partition) tuple.push_back(d.ToString());
      partitions.insert(tuple);
    }
    std::map<std::string, std::string> s;
    s["operation"] = "append";
    if (!files.empty()) {
      s["added-data-files"] = std::to_string(files.size());
      s["added-records"] = std::to_string(records);
      s["added-files-size"] = std::to_string(bytes);
    }
    s["changed-partition-count"] = std::to_string(partitions.size());
    auto total = [&](const char* key, int64_t added) {
      if (!parent) {
        s[key] = std::to_string(added);
      } else if (auto v = SummaryLong(parent, key)) {
        s[key] = std::to_string(*v + added);
      }
    };
    total("total-records", records);
    total("total-files-size", bytes);
    total("total-data-files", static_cast<int64_t>(files.size()));
    total("total-delete-files", 0);
    total("total-position-deletes", 0);
    total("total-equality-deletes", 0);
    s[kNextOffsetsKey] = EncodeNextOffsets(next);
    s[kWriterKey] = run_id_;
    return s;
  }

  // Closes every open file and commits them, with the offsets reached, as
  // one append snapshot; a conflict is re-applied on the new table state.
  // `last`: the run's final commit (a manifest merge still running is
  // waited for, and what is left merged inline).
  Status Commit(bool last = false) {
    const auto draining = Clock::now();
    RETURN_NOT_OK(Drain());
    times_.drain += Clock::now() - draining;
    const auto committing = Clock::now();
    // Every record polled so far is in a closed file: the positions are theirs.
    const TopicOffsets ours = Positions();
    TopicOffsets next;
    std::vector<iceberg::DataFile> files;
    for (auto& w : writers_) {
      files.insert(files.end(), std::make_move_iterator(w->finished.begin()),
                   std::make_move_iterator(w->finished.end()));
      w->finished.clear();
    }
    // A deterministic order for the manifest, whichever writer finished first.
    std::stable_sort(files.begin(), files.end(),
                     [](const iceberg::DataFile& a, const iceberg::DataFile& b) { return a.path < b.path; });
    uncommitted_records_ = 0;

    const std::string name = o_.table.ToString();
    const std::string commit_id = iceberg::NewUuid();
    const int64_t snapshot_id = iceberg::NewSnapshotId();
    std::optional<iceberg::ManifestFile> manifest;
    if (!files.empty()) {
      std::vector<iceberg::ManifestEntry> entries;
      for (auto& f : files) {
        iceberg::ManifestEntry e;
        e.status = iceberg::EntryStatus::kAdded;
        e.snapshot_id = snapshot_id;
        e.file = f;
        entries.push_back(std::move(e));
      }
      const std::string location = fmt::format("{}/{}-m0.avro", metadata_root_, commit_id);
      auto m = iceberg::WriteManifest(*io_, location, table_->metadata, spec_, snapshot_id, entries);
      if (!m.ok()) {
        return Status(m.status().code(),
                      fmt::format("table '{}': writing manifest {}: {}", name, location, m.status().message()));
      }
      manifest = std::move(*m);
    }
    int retries = 4;
    {
      std::string r = table_->metadata.Property("commit.retry.num-retries");
      if (!r.empty()) {
        try {
          retries = std::max(0, std::stoi(r));
        } catch (const std::exception&) {
        }
      }
    }
    int64_t backoff_ms = 100;
    const std::map<std::string, std::string> schema_properties = TakeSchemaProperties();
    for (int attempt = 0;; ++attempt) {
      const iceberg::TableMetadata& md = table_->metadata;
      const iceberg::Snapshot* parent = MainSnapshot(md);
      // Partitions other writers archive (another --partitions subset) keep their offsets.
      ASSIGN_OR_RAISE(TopicOffsets base, ReadNextOffsets(md));
      if (base.empty()) base = from_data_;
      next = Overlay(std::move(base), ours);
      std::vector<iceberg::ManifestFile> manifests;
      if (manifest) manifests.push_back(*manifest);
      const size_t own = manifests.size();
      if (parent) {
        auto parents = iceberg::ReadManifestList(*io_, md, *parent);
        if (!parents.ok()) {
          return Status(parents.status().code(), fmt::format("table '{}': reading the manifest list of snapshot {}: {}",
                                                             name, parent->snapshot_id, parents.status().message()));
        }
        manifests.insert(manifests.end(), parents->begin(), parents->end());
      }
      // A merge append, as Iceberg Java's: the parent's small manifests are
      // merged once they number commit.manifest.min-count-to-merge, beside
      // the archive but in its last commit (background_merge.h).
      if (!merger_) merger_ = std::make_unique<BackgroundMerge>(io_);
      auto merged = merger_->ForCommit(md, snapshot_id, std::move(manifests), own,
                                       fmt::format("{}/{}-{}", metadata_root_, commit_id, attempt + 1), last);
      if (!merged.ok()) return merged.status().WithContext(fmt::format("table '{}'", name));
      manifests = std::move(*merged);
      iceberg::Snapshot snap;
      snap.snapshot_id = snapshot_id;
      if (parent) snap.parent_snapshot_id = parent->snapshot_id;
      snap.sequence_number = md.last_sequence_number + 1;
      snap.timestamp_ms = std::max(WallMs(), md.last_updated_ms);
      snap.schema_id = md.current_schema_id;
      snap.manifest_list = fmt::format("{}/snap-{}-{}-{}.avro", metadata_root_, snapshot_id, attempt + 1, commit_id);
      snap.summary = Summary(parent, files, next);
      if (md.format_version >= 3) snap.first_row_id = md.next_row_id.value_or(0);
      auto rows = iceberg::WriteManifestList(*io_, snap.manifest_list, md, snap, manifests);
      if (!rows.ok()) {
        return Status(rows.status().code(), fmt::format("table '{}': writing manifest list {}: {}", name,
                                                        snap.manifest_list, rows.status().message()));
      }
      if (md.format_version >= 3) snap.added_rows = *rows;
      std::vector<iceberg::TableRequirement> reqs{
          iceberg::TableRequirement::AssertTableUuid(md.table_uuid),
          iceberg::TableRequirement::AssertRefSnapshotId(
              "main", parent ? std::optional<int64_t>(parent->snapshot_id) : std::nullopt)};
      std::vector<iceberg::TableUpdate> updates{iceberg::TableUpdate::AddSnapshot(snap),
                                                iceberg::TableUpdate::SetBranch("main", snapshot_id)};
      // Writer schemas first seen in these records go in with them.
      if (!schema_properties.empty()) updates.push_back(iceberg::TableUpdate::SetProperties(schema_properties));
      auto committed = catalog_.CommitTable(o_.table, *table_, reqs, updates);
      if (committed.ok()) {
        table_ = std::move(*committed);
        break;
      }
      const Status& st = committed.status();
      if (st.code() == StatusCode::kCommitStateUnknown) {
        auto reloaded = catalog_.LoadTable(o_.table);
        if (reloaded.ok() && OnMain(reloaded->metadata, snapshot_id)) {
          table_ = std::move(*reloaded);
          break;
        }
        return Status::CommitStateUnknown(
            "table '{}': commit state unknown for snapshot {} ({}); its files are kept; rerun: archive resumes from "
            "the offsets the table holds",
            name, snapshot_id, st.message());
      }
      if (st.code() != StatusCode::kCommitConflict) {
        return Status(st.code(),
                      fmt::format("table '{}': committing snapshot {}: {}", name, snapshot_id, st.message()));
      }
      // Lost a race: what did the other writer do?
      ASSIGN_OR_RAISE(auto reloaded, catalog_.LoadTable(o_.table));
      if (reloaded.metadata.table_uuid != md.table_uuid) {
        return Status::CommitConflict(
            "table '{}' was replaced while archiving (table uuid {} is now {}); nothing of "
            "this commit was kept; rerun to archive into the new table",
            name, md.table_uuid, reloaded.metadata.table_uuid);
      }
      ASSIGN_OR_RAISE(auto theirs, ReadNextOffsets(reloaded.metadata));
      if (theirs.empty()) theirs = from_data_;
      for (const auto& [topic, parts] : ours) {
        for (const auto& [p, off] : parts) {
          std::optional<int64_t> mine, now;
          if (auto t = committed_.find(topic); t != committed_.end() && t->second.count(p)) mine = t->second.at(p);
          if (auto t = theirs.find(topic); t != theirs.end() && t->second.count(p)) now = t->second.at(p);
          if (mine != now) {
            return Status::CommitConflict(
                "another writer (thaw.archive.writer={}) committed topic {} partition {} up to offset {} while this "
                "archiver started at {}; run one archiver per table (this archiver's records were not committed; "
                "the table is intact)",
                LastWriter(reloaded.metadata), topic, p, now ? std::to_string(*now) : "none",
                mine ? *mine : started_[topic][p]);
          }
        }
      }
      if (attempt >= retries) {
        return Status::CommitConflict(
            "table '{}': commit conflicts exhausted after {} retries (other writers keep "
            "committing); nothing of this commit was kept; rerun resumes from the table",
            name, retries);
      }
      log::Info("table {}: commit conflict ({}); retrying on the new state", name, st.message());
      ++summary_.conflicts_retried;
      if (metrics_) metrics_->Conflict();
      table_ = std::move(reloaded);
      std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms));
      backoff_ms = std::min<int64_t>(backoff_ms * 2, 2000);
    }
    merger_->Committed(snapshot_id);
    summary_.manifest_merges = merger_->merges_taken();
    const auto commit_time = Clock::now() - committing;
    times_.commit += commit_time;
    committed_ = next;
    ++summary_.commits;
    {
      int64_t records = 0, parquet_bytes = 0;
      for (const auto& f : files) {
        records += f.record_count;
        parquet_bytes += f.file_size;
      }
      const std::string line =
          fmt::format("commit {}: snapshot {}, {} records in {} data files ({} of Parquet); next offsets {}; {:.1f} ms "
                      "(manifests and catalog)",
                      summary_.commits, snapshot_id, records, files.size(), Mb(parquet_bytes), DescribeOffsets(next),
                      std::chrono::duration<double, std::milli>(commit_time).count());
      if (o_.log_commits) {
        log::Info("{}", line);
      } else {
        log::Debug("{}", line);
      }
    }
    summary_.data_files += static_cast<int64_t>(files.size());
    summary_.snapshot_id = snapshot_id;
    if (metrics_) metrics_->Committed(committed_, snapshot_id, files.size());
    if (!o_.group_id.empty()) {
      for (auto& s : sources_) {
        auto it = committed_.find(s.topic);
        if (it != committed_.end()) s.kafka->CommitGroupOffsets(it->second);
      }
    }
    return Status::OK();
  }

  catalog::Catalog& catalog_;
  const ArchiveOptions& o_;
  std::unique_ptr<ArchiveMetrics> metrics_ = ArchiveMetrics::Make(o_.table.ToString());
  Clock::time_point start_;
  std::string run_id_;
  ArchiveSummary summary_;
  std::optional<iceberg::Table> table_;
  bool has_topic_column_ = false;
  TopicOffsets committed_;  // as the table holds them (our last commit, or where this run resumed)
  TopicOffsets started_;
  // The offsets the data files proved at the start, when no snapshot had
  // them (NextOffsetsFromData): what the table holds until the first commit.
  TopicOffsets from_data_;
  std::vector<Source> sources_;
  std::string data_root_, metadata_root_;
  iceberg::PartitionSpec spec_;
  std::optional<iceberg::Schema> schema_;
  std::shared_ptr<storage::FileIO> io_;
  std::unique_ptr<BackgroundMerge> merger_;
  std::optional<int32_t> sort_order_id_;  // what data files name as their sort order
  int64_t row_group_bytes_ = 64 << 20;
  int zstd_level_ = 3;
  std::atomic<int64_t> file_seq_{0};
  // Writer threads (see StartWriters).
  std::vector<std::unique_ptr<Writer>> writers_;
  std::mutex mu_;
  std::condition_variable idle_;  // a task finished
  bool quit_ = false;
  int64_t in_flight_ = 0;                   // bytes handed to writers, not yet appended
  int64_t pending_ = 0;                     // tasks queued or running
  Status write_error_;                      // the first error of any writer
  std::atomic<int64_t> buffered_total_{0};  // appended to open files, not yet in written row groups
  int64_t uncommitted_records_ = 0;
  // Where the loop's thread spent its time (--verbose).
  struct {
    Clock::duration poll{}, backpressure{}, drain{}, commit{};
    int64_t forced_commits = 0;
  } times_;
  iceberg::TypePtr value_type_;                                         // row layout: the value struct's type
  std::shared_ptr<const records::AvroValueSchema> avro_;                // row layout with Avro values
  std::optional<int32_t> avro_schema_id_;                               // their Confluent schema id, when framed
  iceberg::TypePtr key_type_;                                           // --key-format registry: key_decoded's type
  // Values (--value-format registry) and keys (--key-format registry) read
  // through a schema registry: the writer schemas, a new table's struct
  // from its first framed value (key), the ids prepared (loop thread).
  struct ThroughRegistry {
    std::shared_ptr<RegistrySchemas> schemas;
    RegistryValueType created;
    std::set<int32_t> seen;
  };
  ThroughRegistry values_, keys_;
  ThroughRegistry& Through(bool key) { return key ? keys_ : values_; }
  const std::shared_ptr<registry::SchemaRegistry>& RegistryOf(bool key) const {
    return key ? o_.key_registry : o_.value_registry;
  }
  RowValueDecoder::Counts retired_;                                     // of decoders replaced by evolution
  std::vector<std::pair<std::string, records::RecordBatch>> inferred_;  // polled while inferring
};

}  // namespace

Result<ArchiveSummary> RunArchive(catalog::Catalog& catalog, const ArchiveOptions& options) {
  Archiver a(catalog, options);
  return a.Run();
}

}  // namespace thaw::archive

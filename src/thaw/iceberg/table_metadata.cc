#include "thaw/iceberg/table_metadata.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace thaw::iceberg {

using json = nlohmann::json;

bool PartitionSpec::unpartitioned() const {
  return std::all_of(fields.begin(), fields.end(),
                     [](const PartitionField& f) { return f.transform.kind == TransformKind::kVoid; });
}

std::string Snapshot::operation() const {
  auto it = summary.find("operation");
  return it == summary.end() ? "" : it->second;
}

namespace {

Result<PartitionSpec> ParseSpec(const json& j, int32_t default_id) {
  PartitionSpec spec;
  spec.spec_id = j.is_object() ? j.value("spec-id", default_id) : default_id;
  const json& fields = j.is_array() ? j : j.at("fields");
  int32_t next_v1_id = 1000;
  for (const auto& f : fields) {
    PartitionField pf;
    if (f.contains("source-ids")) {
      pf.source_ids = f["source-ids"].get<std::vector<int32_t>>();
    } else {
      pf.source_ids.push_back(f.at("source-id").get<int32_t>());
    }
    pf.field_id = f.contains("field-id") ? f["field-id"].get<int32_t>() : next_v1_id;
    next_v1_id = pf.field_id + 1;
    pf.name = f.at("name").get<std::string>();
    pf.transform = Transform::Parse(f.at("transform").get<std::string>());
    spec.fields.push_back(std::move(pf));
  }
  return spec;
}

Result<Snapshot> ParseSnapshot(const json& j) {
  Snapshot s;
  s.snapshot_id = j.at("snapshot-id").get<int64_t>();
  if (j.contains("parent-snapshot-id") && !j["parent-snapshot-id"].is_null()) {
    s.parent_snapshot_id = j["parent-snapshot-id"].get<int64_t>();
  }
  s.sequence_number = j.value("sequence-number", int64_t{0});
  s.timestamp_ms = j.at("timestamp-ms").get<int64_t>();
  if (j.contains("manifest-list")) s.manifest_list = j["manifest-list"].get<std::string>();
  if (j.contains("manifests")) s.v1_manifests = j["manifests"].get<std::vector<std::string>>();
  if (j.contains("summary")) {
    for (const auto& [k, v] : j["summary"].items()) s.summary[k] = v.is_string() ? v.get<std::string>() : v.dump();
  }
  if (j.contains("schema-id") && !j["schema-id"].is_null()) s.schema_id = j["schema-id"].get<int32_t>();
  if (j.contains("first-row-id") && !j["first-row-id"].is_null()) s.first_row_id = j["first-row-id"].get<int64_t>();
  if (j.contains("added-rows") && !j["added-rows"].is_null()) s.added_rows = j["added-rows"].get<int64_t>();
  if (s.manifest_list.empty() && !j.contains("manifests")) {
    return Status::Corrupt("snapshot {} has neither manifest-list nor manifests", s.snapshot_id);
  }
  return s;
}

Result<TableMetadata> ParseImpl(const json& j, const TableMetadata* reuse) {
  TableMetadata md;
  if (!j.is_object()) return Status::Corrupt("top level is not a JSON object");
  if (!j.contains("format-version")) return Status::Corrupt("missing required field 'format-version'");
  md.format_version = j["format-version"].get<int>();
  if (md.format_version < 1 || md.format_version > 3) {
    return Status::Unsupported("format-version {} (Thaw reads Iceberg format versions 1 to 3)", md.format_version);
  }
  md.table_uuid = j.value("table-uuid", std::string());
  md.location = j.value("location", std::string());
  md.last_updated_ms = j.value("last-updated-ms", int64_t{0});
  md.last_sequence_number = j.value("last-sequence-number", int64_t{0});

  if (auto it = j.find("last-column-id"); it != j.end() && it->is_number_integer()) {
    md.last_column_id = it->get<int32_t>();
  }
  if (j.contains("schemas")) {
    for (const auto& s : j["schemas"]) {
      ASSIGN_OR_RAISE(auto schema, Schema::FromJson(s));
      md.schemas.push_back(std::move(schema));
    }
    md.current_schema_id = j.value("current-schema-id", 0);
  } else if (j.contains("schema")) {
    ASSIGN_OR_RAISE(auto schema, Schema::FromJson(j["schema"]));
    md.current_schema_id = schema.schema_id();
    md.schemas.push_back(std::move(schema));
  } else {
    return Status::Corrupt("missing 'schemas' (and v1 'schema')");
  }
  if (!md.SchemaById(md.current_schema_id)) {
    return Status::Corrupt("current-schema-id {} is not among the schemas", md.current_schema_id);
  }

  if (j.contains("partition-specs")) {
    for (const auto& s : j["partition-specs"]) {
      ASSIGN_OR_RAISE(auto spec, ParseSpec(s, 0));
      md.specs.push_back(std::move(spec));
    }
    md.default_spec_id = j.value("default-spec-id", 0);
  } else if (j.contains("partition-spec")) {
    ASSIGN_OR_RAISE(auto spec, ParseSpec(j["partition-spec"], 0));
    md.specs.push_back(std::move(spec));
  } else {
    md.specs.push_back(PartitionSpec{});
  }

  if (j.contains("properties") && j["properties"].is_object()) {
    for (const auto& [k, v] : j["properties"].items()) {
      md.properties[k] = v.is_string() ? v.get<std::string>() : v.dump();
    }
  }
  if (j.contains("current-snapshot-id") && !j["current-snapshot-id"].is_null()) {
    int64_t id = j["current-snapshot-id"].get<int64_t>();
    if (id != -1) md.current_snapshot_id = id;  // Java writes -1 for "none"
  }
  if (j.contains("snapshots")) {
    // A commit's new document mostly repeats its base's snapshots in order.
    size_t next_reused = 0;
    auto reused = [&](const json& s) -> std::shared_ptr<const Snapshot> {
      if (!reuse || !s.is_object()) return nullptr;
      auto id = s.find("snapshot-id");
      if (id == s.end() || !id->is_number_integer()) return nullptr;
      const int64_t want = id->get<int64_t>();
      std::shared_ptr<const Snapshot> found;
      if (next_reused < reuse->snapshots.size() && reuse->snapshots[next_reused]->snapshot_id == want) {
        found = reuse->snapshots[next_reused++];
      } else {
        for (size_t i = 0; i < reuse->snapshots.size(); ++i) {
          if (reuse->snapshots[i]->snapshot_id != want) continue;
          found = reuse->snapshots[i];
          next_reused = i + 1;
          break;
        }
      }
      if (!found || found->timestamp_ms != s.value("timestamp-ms", int64_t{-1})) return nullptr;
      auto list = s.find("manifest-list");
      const bool same_list = list == s.end() ? found->manifest_list.empty()
                                             : list->is_string() && list->get_ref<const std::string&>() == found->manifest_list;
      return same_list ? found : nullptr;
    };
    md.snapshots.reserve(j["snapshots"].size());
    for (const auto& s : j["snapshots"]) {
      if (auto same = reused(s)) {
        md.snapshots.push_back(std::move(same));
        continue;
      }
      ASSIGN_OR_RAISE(auto snap, ParseSnapshot(s));
      md.snapshots.push_back(std::make_shared<const Snapshot>(std::move(snap)));
    }
  }
  if (j.contains("snapshot-log")) {
    for (const auto& e : j["snapshot-log"]) {
      md.snapshot_log.push_back({e.at("timestamp-ms").get<int64_t>(), e.at("snapshot-id").get<int64_t>()});
    }
  }
  if (j.contains("refs") && j["refs"].is_object()) {
    for (const auto& [name, r] : j["refs"].items()) {
      md.refs[name] = SnapshotRef{r.at("snapshot-id").get<int64_t>(), r.value("type", std::string("branch"))};
    }
  }
  if (md.current_snapshot_id && !md.SnapshotById(*md.current_snapshot_id)) {
    return Status::Corrupt("current-snapshot-id {} is not among the snapshots", *md.current_snapshot_id);
  }
  if (j.contains("next-row-id") && !j["next-row-id"].is_null()) md.next_row_id = j["next-row-id"].get<int64_t>();
  return md;
}

}  // namespace

Result<TableMetadata> TableMetadata::Parse(std::string_view text, std::string_view source) {
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Status::Corrupt("table metadata {}: not valid JSON (file truncated or not a metadata file)", source);
  }
  return FromJson(j, source);
}

Result<TableMetadata> TableMetadata::FromJson(const json& j, std::string_view source, const TableMetadata* reuse) {
  try {
    auto r = ParseImpl(j, reuse);
    if (!r.ok()) return r.status().WithContext(fmt::format("table metadata {}", source));
    return r;
  } catch (const json::exception& e) {
    return Status::Corrupt("table metadata {}: {}", source, e.what());
  }
}

const Schema& TableMetadata::current_schema() const { return *SchemaById(current_schema_id); }

const Schema* TableMetadata::SchemaById(int32_t id) const {
  for (const auto& s : schemas)
    if (s.schema_id() == id) return &s;
  return nullptr;
}

const PartitionSpec* TableMetadata::SpecById(int32_t id) const {
  for (const auto& s : specs)
    if (s.spec_id == id) return &s;
  return nullptr;
}

const Snapshot* TableMetadata::SnapshotById(int64_t id) const {
  for (const auto& s : snapshots)
    if (s->snapshot_id == id) return s.get();
  return nullptr;
}

const Snapshot* TableMetadata::CurrentSnapshot() const {
  if (auto it = refs.find("main"); it != refs.end()) return SnapshotById(it->second.snapshot_id);
  return current_snapshot_id ? SnapshotById(*current_snapshot_id) : nullptr;
}

const Schema& TableMetadata::SchemaFor(const Snapshot& s) const {
  if (s.schema_id) {
    if (const Schema* schema = SchemaById(*s.schema_id)) return *schema;
  }
  return current_schema();
}

std::string TableMetadata::Property(const std::string& key, const std::string& fallback) const {
  auto it = properties.find(key);
  return it == properties.end() ? fallback : it->second;
}

Result<const Snapshot*> SelectSnapshot(const TableMetadata& md, const SnapshotSelector& sel) {
  if (sel.snapshot_id) {
    const Snapshot* s = md.SnapshotById(*sel.snapshot_id);
    if (!s)
      return Status::NotFound("snapshot {} does not exist in this table (see `thaw inspect` for snapshots)",
                              *sel.snapshot_id);
    return s;
  }
  if (sel.ref) {
    auto it = md.refs.find(*sel.ref);
    if (it == md.refs.end()) {
      if (*sel.ref == "main") return md.CurrentSnapshot();
      std::string names;
      for (const auto& [n, r] : md.refs) names += (names.empty() ? "" : ", ") + n;
      return Status::NotFound("ref '{}' does not exist (refs: {})", *sel.ref, names.empty() ? "none" : names);
    }
    const Snapshot* s = md.SnapshotById(it->second.snapshot_id);
    if (!s) return Status::Corrupt("ref '{}' points at missing snapshot {}", *sel.ref, it->second.snapshot_id);
    return s;
  }
  if (sel.as_of_ms) {
    // The snapshot that was current at that time: the last snapshot-log entry
    // at or before it (the log records main's history, unlike `snapshots`).
    const Snapshot* best = nullptr;
    if (!md.snapshot_log.empty()) {
      for (const auto& e : md.snapshot_log) {
        if (e.timestamp_ms <= *sel.as_of_ms) best = md.SnapshotById(e.snapshot_id);
      }
    } else {
      for (const auto& s : md.snapshots) {
        if (s->timestamp_ms <= *sel.as_of_ms && (!best || s->timestamp_ms >= best->timestamp_ms)) best = s.get();
      }
    }
    if (!best)
      return Status::NotFound("no snapshot was current at {} ms (the table's first snapshot is later)", *sel.as_of_ms);
    return best;
  }
  return md.CurrentSnapshot();
}

}  // namespace thaw::iceberg

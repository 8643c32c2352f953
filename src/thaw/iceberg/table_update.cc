#include "thaw/iceberg/table_update.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <random>
#include <set>
#include <unordered_set>

#include "thaw/iceberg/schema.h"

namespace thaw::iceberg {

using json = nlohmann::json;

TableRequirement TableRequirement::AssertTableUuid(std::string uuid) {
  TableRequirement r;
  r.kind = Kind::kAssertTableUuid;
  r.uuid = std::move(uuid);
  return r;
}

TableRequirement TableRequirement::AssertRefSnapshotId(std::string ref, std::optional<int64_t> snapshot_id) {
  TableRequirement r;
  r.kind = Kind::kAssertRefSnapshotId;
  r.ref = std::move(ref);
  r.snapshot_id = snapshot_id;
  return r;
}

TableRequirement TableRequirement::AssertCurrentSchemaId(int32_t schema_id) {
  TableRequirement r;
  r.kind = Kind::kAssertCurrentSchemaId;
  r.schema_id = schema_id;
  return r;
}

TableUpdate TableUpdate::AddSchema(nlohmann::json schema, int32_t last_column_id) {
  TableUpdate u;
  u.kind = Kind::kAddSchema;
  u.schema = std::move(schema);
  u.last_column_id = last_column_id;
  return u;
}

TableUpdate TableUpdate::SetCurrentSchema(int32_t schema_id) {
  TableUpdate u;
  u.kind = Kind::kSetCurrentSchema;
  u.schema_id = schema_id;
  return u;
}

TableUpdate TableUpdate::AddSnapshot(Snapshot s) {
  TableUpdate u;
  u.kind = Kind::kAddSnapshot;
  u.snapshot = std::move(s);
  return u;
}

TableUpdate TableUpdate::SetBranch(std::string ref, int64_t snapshot_id) {
  TableUpdate u;
  u.kind = Kind::kSetSnapshotRef;
  u.ref_name = std::move(ref);
  u.ref_type = "branch";
  u.ref_snapshot_id = snapshot_id;
  return u;
}

TableUpdate TableUpdate::SetTag(std::string ref, int64_t snapshot_id) {
  TableUpdate u = SetBranch(std::move(ref), snapshot_id);
  u.ref_type = "tag";
  return u;
}

TableUpdate TableUpdate::RemoveRef(std::string ref) {
  TableUpdate u;
  u.kind = Kind::kRemoveSnapshotRef;
  u.ref_name = std::move(ref);
  return u;
}

TableUpdate TableUpdate::RemoveSnapshots(std::vector<int64_t> ids) {
  TableUpdate u;
  u.kind = Kind::kRemoveSnapshots;
  u.snapshot_ids = std::move(ids);
  return u;
}

TableUpdate TableUpdate::SetProperties(std::map<std::string, std::string> props) {
  TableUpdate u;
  u.kind = Kind::kSetProperties;
  u.updates = std::move(props);
  return u;
}

json ToJson(const TableRequirement& r) {
  switch (r.kind) {
    case TableRequirement::Kind::kAssertCreate:
      return {{"type", "assert-create"}};
    case TableRequirement::Kind::kAssertTableUuid:
      return {{"type", "assert-table-uuid"}, {"uuid", r.uuid}};
    case TableRequirement::Kind::kAssertRefSnapshotId:
      return {{"type", "assert-ref-snapshot-id"},
              {"ref", r.ref},
              {"snapshot-id", r.snapshot_id ? json(*r.snapshot_id) : json(nullptr)}};
    case TableRequirement::Kind::kAssertCurrentSchemaId:
      return {{"type", "assert-current-schema-id"}, {"current-schema-id", r.schema_id}};
  }
  return {};
}

json SnapshotToJson(const Snapshot& s) {
  json j = {{"snapshot-id", s.snapshot_id}, {"sequence-number", s.sequence_number}, {"timestamp-ms", s.timestamp_ms}};
  if (s.parent_snapshot_id) j["parent-snapshot-id"] = *s.parent_snapshot_id;
  if (!s.manifest_list.empty()) j["manifest-list"] = s.manifest_list;
  if (!s.v1_manifests.empty()) j["manifests"] = s.v1_manifests;
  json summary = json::object();
  for (const auto& [k, v] : s.summary) summary[k] = v;
  j["summary"] = std::move(summary);
  if (s.schema_id) j["schema-id"] = *s.schema_id;
  if (s.first_row_id) j["first-row-id"] = *s.first_row_id;
  if (s.added_rows) j["added-rows"] = *s.added_rows;
  return j;
}

json ToJson(const TableUpdate& u) {
  switch (u.kind) {
    case TableUpdate::Kind::kAddSnapshot:
      return {{"action", "add-snapshot"}, {"snapshot", SnapshotToJson(u.snapshot)}};
    case TableUpdate::Kind::kSetSnapshotRef:
      return {{"action", "set-snapshot-ref"},
              {"ref-name", u.ref_name},
              {"type", u.ref_type},
              {"snapshot-id", u.ref_snapshot_id}};
    case TableUpdate::Kind::kRemoveSnapshotRef:
      return {{"action", "remove-snapshot-ref"}, {"ref-name", u.ref_name}};
    case TableUpdate::Kind::kRemoveSnapshots:
      return {{"action", "remove-snapshots"}, {"snapshot-ids", u.snapshot_ids}};
    case TableUpdate::Kind::kSetProperties: {
      json updates = json::object();
      for (const auto& [k, v] : u.updates) updates[k] = v;
      return {{"action", "set-properties"}, {"updates", std::move(updates)}};
    }
    case TableUpdate::Kind::kRemoveProperties:
      return {{"action", "remove-properties"}, {"removals", u.removals}};
    case TableUpdate::Kind::kAddSchema:
      return {{"action", "add-schema"}, {"schema", u.schema}, {"last-column-id", u.last_column_id}};
    case TableUpdate::Kind::kSetCurrentSchema:
      return {{"action", "set-current-schema"}, {"schema-id", u.schema_id}};
  }
  return {};
}

namespace {

std::string RefText(const std::optional<int64_t>& id) {
  return id ? fmt::format("snapshot {}", *id) : std::string("absent");
}

// The snapshot a ref points at: refs.<name>.snapshot-id; for "main" in a
// document without refs (format v1), current-snapshot-id (-1 = none).
std::optional<int64_t> RefSnapshot(const json& md, const std::string& ref) {
  if (md.contains("refs") && md["refs"].is_object() && md["refs"].contains(ref)) {
    const json& r = md["refs"][ref];
    if (r.is_object() && r.contains("snapshot-id") && r["snapshot-id"].is_number_integer()) {
      return r["snapshot-id"].get<int64_t>();
    }
    return std::nullopt;
  }
  bool has_refs = md.contains("refs") && md["refs"].is_object() && !md["refs"].empty();
  if (ref == "main" && !has_refs && md.contains("current-snapshot-id") &&
      md["current-snapshot-id"].is_number_integer()) {
    int64_t id = md["current-snapshot-id"].get<int64_t>();
    if (id != -1) return id;
  }
  return std::nullopt;
}

Status CheckRequirement(const json& base, const TableRequirement& r) {
  switch (r.kind) {
    case TableRequirement::Kind::kAssertCreate:
      if (!base.is_null()) return Status::CommitConflict("requirement assert-create failed: the table already exists");
      return Status::OK();
    case TableRequirement::Kind::kAssertTableUuid: {
      std::string actual = base.value("table-uuid", std::string());
      if (actual != r.uuid) {
        return Status::CommitConflict(
            "requirement assert-table-uuid failed: expected table-uuid {} but the table's is {} (the table was "
            "dropped and re-created?)",
            r.uuid, actual.empty() ? "absent" : actual);
      }
      return Status::OK();
    }
    case TableRequirement::Kind::kAssertRefSnapshotId: {
      std::optional<int64_t> actual = RefSnapshot(base, r.ref);
      if (actual != r.snapshot_id) {
        return Status::CommitConflict(
            "requirement assert-ref-snapshot-id failed: expected ref '{}' at {} but it is at {} (another writer "
            "committed: reload the table and re-apply)",
            r.ref, RefText(r.snapshot_id), RefText(actual));
      }
      return Status::OK();
    }
    case TableRequirement::Kind::kAssertCurrentSchemaId: {
      const int64_t actual = base.value("current-schema-id", int64_t{0});
      if (actual != r.schema_id) {
        return Status::CommitConflict(
            "requirement assert-current-schema-id failed: expected schema {} but the table's is {} (another writer "
            "changed the schema: reload the table and re-apply)",
            r.schema_id, actual);
      }
      return Status::OK();
    }
  }
  return Status::OK();
}

json& ArrayField(json& md, const char* key) {
  if (!md.contains(key) || !md[key].is_array()) md[key] = json::array();
  return md[key];
}

json& ObjectField(json& md, const char* key) {
  if (!md.contains(key) || !md[key].is_object()) md[key] = json::object();
  return md[key];
}

// Newest first: a commit mostly asks for the snapshot it has just added.
const json* FindSnapshot(const json& md, int64_t id) {
  auto snaps = md.find("snapshots");
  if (snaps == md.end() || !snaps->is_array()) return nullptr;
  for (auto s = snaps->rbegin(); s != snaps->rend(); ++s) {
    if (!s->is_object()) continue;
    auto sid = s->find("snapshot-id");
    if (sid != s->end() && sid->is_number_integer() && sid->get<int64_t>() == id) return &*s;
  }
  return nullptr;
}

bool HasSnapshot(const json& md, int64_t id) { return FindSnapshot(md, id) != nullptr; }

int64_t IntField(const json& md, const char* key, int64_t fallback) {
  return md.contains(key) && md[key].is_number_integer() ? md[key].get<int64_t>() : fallback;
}

// The largest field id in a schema JSON (struct fields, list element-id, map
// key-id / value-id, at any depth).
int32_t MaxFieldId(const json& type) {
  int32_t best = 0;
  if (type.is_object()) {
    for (const char* k : {"id", "element-id", "key-id", "value-id"}) {
      if (type.contains(k) && type[k].is_number_integer()) best = std::max(best, type[k].get<int32_t>());
    }
    for (const char* k : {"fields", "type", "element", "key", "value"}) {
      if (!type.contains(k)) continue;
      const json& sub = type[k];
      if (sub.is_array()) {
        for (const auto& f : sub) best = std::max(best, MaxFieldId(f));
      } else if (sub.is_object()) {
        best = std::max(best, MaxFieldId(sub));
      }
    }
  }
  return best;
}

// Java's rule (TableMetadata.Builder's snapshot-log update): entries for
// snapshots that are gone are dropped together with all history before them,
// so that the log never shows a snapshot as current over a time when a removed
// one was.
void TrimSnapshotLog(json& md) {
  if (!md.contains("snapshot-log") || !md["snapshot-log"].is_array()) return;
  std::unordered_set<int64_t> present;
  if (auto snaps = md.find("snapshots"); snaps != md.end() && snaps->is_array()) {
    for (const auto& s : *snaps) {
      if (s.is_object()) present.insert(s.value("snapshot-id", int64_t{-2}));
    }
  }
  json kept = json::array();
  for (const auto& e : md["snapshot-log"]) {
    if (present.count(e.value("snapshot-id", int64_t{-2}))) {
      kept.push_back(e);
    } else {
      kept = json::array();
    }
  }
  md["snapshot-log"] = std::move(kept);
}

Result<json> ApplyImpl(json md, const std::string& base_location, const std::vector<TableRequirement>& requirements,
                       const std::vector<TableUpdate>& updates, int64_t now_ms) {
  for (const auto& r : requirements) RETURN_NOT_OK(CheckRequirement(md, r));
  if (!md.is_object()) return Status::Invalid("cannot commit: the base table metadata is not a JSON object");
  const int64_t base_last_updated_ms = IntField(md, "last-updated-ms", 0);
  const int format_version = static_cast<int>(IntField(md, "format-version", 1));
  int64_t last_updated_ms = now_ms;
  std::set<int64_t> added;
  std::optional<std::unordered_set<int64_t>> ids;  // the snapshots', for add-snapshot
  bool removed_any = false;
  std::optional<int64_t> last_added_schema;

  for (const auto& u : updates) {
    switch (u.kind) {
      case TableUpdate::Kind::kAddSnapshot: {
        const Snapshot& s = u.snapshot;
        if (!ids) {  // once per commit, however many snapshots it adds
          ids.emplace();
          if (auto snaps = md.find("snapshots"); snaps != md.end() && snaps->is_array()) {
            ids->reserve(snaps->size() + updates.size());
            for (const auto& e : *snaps) {
              if (e.is_object()) ids->insert(e.value("snapshot-id", int64_t{-2}));
            }
          }
        }
        if (!ids->insert(s.snapshot_id).second) {
          return Status::Invalid("cannot add snapshot {}: the table already has a snapshot with that id",
                                 s.snapshot_id);
        }
        if (s.summary.find("operation") == s.summary.end()) {
          return Status::Invalid("cannot add snapshot {}: its summary has no 'operation'", s.snapshot_id);
        }
        const int64_t last_seq = IntField(md, "last-sequence-number", 0);
        if (format_version >= 2 && s.parent_snapshot_id && s.sequence_number <= last_seq) {
          return Status::Invalid(
              "cannot add snapshot {}: its sequence number {} is not above the table's last-sequence-number {}",
              s.snapshot_id, s.sequence_number, last_seq);
        }
        if (format_version >= 3) {
          const int64_t next_row_id = IntField(md, "next-row-id", 0);
          if (!s.first_row_id) {
            return Status::Invalid("cannot add snapshot {} to a format v3 table: it has no first-row-id",
                                   s.snapshot_id);
          }
          if (*s.first_row_id < next_row_id) {
            return Status::Invalid("cannot add snapshot {}: its first-row-id {} is below the table's next-row-id {}",
                                   s.snapshot_id, *s.first_row_id, next_row_id);
          }
          if (!s.added_rows) {
            return Status::Invalid("cannot add snapshot {} to a format v3 table: it has no added-rows", s.snapshot_id);
          }
          md["next-row-id"] = *s.first_row_id + *s.added_rows;
        }
        ArrayField(md, "snapshots").push_back(SnapshotToJson(s));
        md["last-sequence-number"] = std::max(last_seq, s.sequence_number);
        added.insert(s.snapshot_id);
        // As Iceberg Java: a commit that adds a snapshot is dated by it.
        last_updated_ms = s.timestamp_ms;
        break;
      }
      case TableUpdate::Kind::kSetSnapshotRef: {
        const json* snap = FindSnapshot(md, u.ref_snapshot_id);
        if (!snap) {
          return Status::Invalid("cannot set ref '{}' to snapshot {}: the table has no such snapshot", u.ref_name,
                                 u.ref_snapshot_id);
        }
        if (u.ref_type != "branch" && u.ref_type != "tag") {
          return Status::Invalid("cannot set ref '{}': type '{}' is neither branch nor tag", u.ref_name, u.ref_type);
        }
        json& refs = ObjectField(md, "refs");
        std::optional<int64_t> before = RefSnapshot(md, u.ref_name);
        json ref = refs.contains(u.ref_name) && refs[u.ref_name].is_object() ? refs[u.ref_name] : json::object();
        ref["snapshot-id"] = u.ref_snapshot_id;  // retention settings of an existing ref are kept
        ref["type"] = u.ref_type;
        refs[u.ref_name] = std::move(ref);
        if (u.ref_name == "main" && before != u.ref_snapshot_id) {
          int64_t ts = added.count(u.ref_snapshot_id) ? snap->value("timestamp-ms", now_ms) : now_ms;
          ArrayField(md, "snapshot-log").push_back({{"timestamp-ms", ts}, {"snapshot-id", u.ref_snapshot_id}});
        }
        break;
      }
      case TableUpdate::Kind::kRemoveSnapshotRef: {
        if (u.ref_name == "main") return Status::Invalid("cannot remove ref 'main': it is the table's current state");
        if (md.contains("refs") && md["refs"].is_object()) md["refs"].erase(u.ref_name);  // absent: nothing to do
        break;
      }
      case TableUpdate::Kind::kRemoveSnapshots: {
        ids.reset();
        // Ids the table does not have are ignored (as Iceberg Java: another
        // expiry may have removed them already).
        std::set<int64_t> ids(u.snapshot_ids.begin(), u.snapshot_ids.end());
        json& snaps = ArrayField(md, "snapshots");
        json kept = json::array();
        for (auto& s : snaps) {
          if (ids.count(s.value("snapshot-id", int64_t{-2}))) {
            removed_any = true;
          } else {
            kept.push_back(std::move(s));
          }
        }
        snaps = std::move(kept);
        // Refs to removed snapshots go, and their statistics files.
        if (md.contains("refs") && md["refs"].is_object()) {
          for (auto it = md["refs"].begin(); it != md["refs"].end();) {
            if (it->is_object() && ids.count(it->value("snapshot-id", int64_t{-2}))) {
              it = md["refs"].erase(it);
            } else {
              ++it;
            }
          }
        }
        for (const char* key : {"statistics", "partition-statistics"}) {
          if (!md.contains(key) || !md[key].is_array()) continue;
          json kept_stats = json::array();
          for (auto& st : md[key]) {
            if (!ids.count(st.value("snapshot-id", int64_t{-2}))) kept_stats.push_back(std::move(st));
          }
          md[key] = std::move(kept_stats);
        }
        break;
      }
      case TableUpdate::Kind::kSetProperties: {
        json& props = ObjectField(md, "properties");
        for (const auto& [k, v] : u.updates) props[k] = v;
        break;
      }
      case TableUpdate::Kind::kRemoveProperties: {
        json& props = ObjectField(md, "properties");
        for (const auto& k : u.removals) props.erase(k);
        break;
      }
      case TableUpdate::Kind::kAddSchema: {
        if (!u.schema.is_object() || !u.schema.contains("schema-id") || !u.schema["schema-id"].is_number_integer()) {
          return Status::Invalid("add-schema: the schema has no schema-id");
        }
        const int64_t id = u.schema["schema-id"].get<int64_t>();
        json& schemas = ArrayField(md, "schemas");
        for (const auto& s : schemas) {
          if (s.value("schema-id", int64_t{-1}) == id) return Status::Invalid("add-schema: schema id {} exists", id);
        }
        if (u.last_column_id < IntField(md, "last-column-id", 0)) {
          return Status::Invalid("add-schema: last-column-id {} is below the table's {}", u.last_column_id,
                                 IntField(md, "last-column-id", 0));
        }
        schemas.push_back(u.schema);
        md["last-column-id"] = u.last_column_id;
        last_added_schema = id;
        break;
      }
      case TableUpdate::Kind::kSetCurrentSchema: {
        int64_t id = u.schema_id;
        if (id == -1) {
          if (!last_added_schema) return Status::Invalid("set-current-schema -1: this commit added no schema");
          id = *last_added_schema;
        }
        bool known = false;
        for (const auto& s : ArrayField(md, "schemas")) known = known || s.value("schema-id", int64_t{-1}) == id;
        if (!known) return Status::Invalid("set-current-schema: the table has no schema {}", id);
        md["current-schema-id"] = id;
        break;
      }
    }
  }
  if (removed_any) TrimSnapshotLog(md);

  // current-snapshot-id follows refs.main (-1: none, as Iceberg Java writes it).
  std::optional<int64_t> main;
  if (md.contains("refs") && md["refs"].is_object() && md["refs"].contains("main")) {
    main = IntField(md["refs"]["main"], "snapshot-id", -1);
  } else if (md.contains("refs") && md["refs"].is_object() && !md["refs"].empty()) {
    main = std::nullopt;
  } else {
    main = RefSnapshot(md, "main");
    if (main && !HasSnapshot(md, *main)) main.reset();  // v1 without refs, current snapshot expired
  }
  md["current-snapshot-id"] = main ? *main : int64_t{-1};

  md["last-updated-ms"] = last_updated_ms;
  if (!base_location.empty()) {
    json& log = ArrayField(md, "metadata-log");
    log.push_back({{"metadata-file", base_location}, {"timestamp-ms", base_last_updated_ms}});
    // write.metadata.previous-versions-max (Iceberg's default 100) bounds the log.
    int64_t max_entries = 100;
    if (md.contains("properties") && md["properties"].is_object() &&
        md["properties"].contains("write.metadata.previous-versions-max") &&
        md["properties"]["write.metadata.previous-versions-max"].is_string()) {
      const std::string& v = md["properties"]["write.metadata.previous-versions-max"].get_ref<const std::string&>();
      char* end = nullptr;
      long long n = std::strtoll(v.c_str(), &end, 10);
      if (end != v.c_str() && *end == '\0' && n >= 1) max_entries = n;
    }
    if (static_cast<int64_t>(log.size()) > max_entries) {
      log.erase(log.begin(), log.begin() + static_cast<std::ptrdiff_t>(log.size() - max_entries));
    }
  }
  return md;
}

}  // namespace

Result<json> ApplyCommit(json base, const std::string& base_location, const std::vector<TableRequirement>& requirements,
                         const std::vector<TableUpdate>& updates, int64_t now_ms) {
  try {
    return ApplyImpl(std::move(base), base_location, requirements, updates, now_ms);
  } catch (const json::exception& e) {
    return Status::Corrupt("table metadata {}: {}", base_location.empty() ? "(new)" : base_location, e.what());
  }
}

json TableCreate::ToRestRequest(const std::string& name) const {
  json props = json::object();
  for (const auto& [k, v] : properties) props[k] = v;
  props["format-version"] = std::to_string(format_version);
  json req = {{"name", name}, {"schema", schema}, {"stage-create", false}, {"properties", std::move(props)}};
  if (!location.empty()) req["location"] = location;
  if (!partition_spec.is_null()) req["partition-spec"] = partition_spec;
  if (!sort_order.is_null()) req["write-order"] = sort_order;
  return req;
}

namespace {

Result<json> NewTableMetadataImpl(const TableCreate& create, int64_t now_ms) {
  if (create.format_version != 2 && create.format_version != 3) {
    return Status::Invalid("format-version {}: new tables are written in format version 2 or 3", create.format_version);
  }
  if (create.location.empty()) return Status::Invalid("a new table needs a location");
  if (!create.schema.is_object() || !create.schema.contains("fields")) {
    return Status::Invalid("a new table needs a schema (a JSON object with 'fields')");
  }
  json schema = create.schema;
  schema["type"] = "struct";
  schema["schema-id"] = 0;
  ASSIGN_OR_RAISE(Schema parsed, Schema::FromJson(schema));
  auto is_field = [&](int32_t id) { return parsed.FindById(id) != nullptr; };

  json spec = create.partition_spec.is_null() ? json{{"fields", json::array()}} : create.partition_spec;
  if (!spec.is_object() || !spec.contains("fields") || !spec["fields"].is_array()) {
    return Status::Invalid("the partition spec must be a JSON object with 'fields'");
  }
  spec["spec-id"] = 0;
  int32_t last_partition_id = 999;  // Iceberg's value for "no partition fields yet"
  for (const auto& f : spec["fields"]) {
    int32_t source = f.value("source-id", -1);
    if (!is_field(source)) {
      return Status::Invalid("partition field '{}' has source-id {}, which is not a field of the schema",
                             f.value("name", std::string("?")), source);
    }
    if (!f.contains("field-id")) {
      return Status::Invalid("partition field '{}' has no field-id", f.value("name", std::string("?")));
    }
    last_partition_id = std::max(last_partition_id, f["field-id"].get<int32_t>());
  }

  json orders = json::array({{{"order-id", 0}, {"fields", json::array()}}});
  int32_t default_order = 0;
  if (!create.sort_order.is_null() && create.sort_order.contains("fields") && !create.sort_order["fields"].empty()) {
    json order = create.sort_order;
    int32_t order_id = order.value("order-id", 1);
    if (order_id == 0) order_id = 1;  // 0 is the unsorted order
    order["order-id"] = order_id;
    for (const auto& f : order["fields"]) {
      int32_t source = f.value("source-id", -1);
      if (!is_field(source)) {
        return Status::Invalid("sort field with source-id {} is not a field of the schema", source);
      }
    }
    default_order = order_id;
    orders.push_back(std::move(order));
  }

  json props = json::object();
  for (const auto& [k, v] : create.properties) {
    if (k == "format-version") continue;  // a table field, not a property
    props[k] = v;
  }
  std::string location = create.location;
  while (location.size() > 1 && location.back() == '/') location.pop_back();

  json md = {
      {"format-version", create.format_version},
      {"table-uuid", NewUuid()},
      {"location", location},
      {"last-sequence-number", 0},
      {"last-updated-ms", now_ms},
      {"last-column-id", MaxFieldId(schema)},
      {"current-schema-id", 0},
      {"schemas", json::array({schema})},
      {"default-spec-id", 0},
      {"partition-specs", json::array({spec})},
      {"last-partition-id", last_partition_id},
      {"default-sort-order-id", default_order},
      {"sort-orders", std::move(orders)},
      {"properties", std::move(props)},
      {"current-snapshot-id", -1},
      {"refs", json::object()},
      {"snapshots", json::array()},
      {"statistics", json::array()},
      {"partition-statistics", json::array()},
      {"snapshot-log", json::array()},
      {"metadata-log", json::array()},
  };
  if (create.format_version >= 3) md["next-row-id"] = 0;
  return md;
}

}  // namespace

Result<json> NewTableMetadata(const TableCreate& create, int64_t now_ms) {
  try {
    return NewTableMetadataImpl(create, now_ms);
  } catch (const json::exception& e) {
    return Status::Invalid("new table at {}: {}", create.location, e.what());
  }
}

std::string NextMetadataLocation(const std::string& table_location, const std::string& current) {
  int64_t version = 0;
  if (!current.empty()) {
    size_t slash = current.find_last_of('/');
    std::string_view file = std::string_view(current).substr(slash == std::string::npos ? 0 : slash + 1);
    int64_t n = 0;
    size_t digits = 0;
    while (digits < file.size() && digits < 18 && file[digits] >= '0' && file[digits] <= '9') {
      n = n * 10 + (file[digits] - '0');
      ++digits;
    }
    version = (digits > 0 ? n : 0) + 1;
  }
  std::string base = table_location;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return fmt::format("{}/metadata/{:05d}-{}.metadata.json", base, version, NewUuid());
}

namespace {

std::mt19937_64& Rng() {
  thread_local std::mt19937_64 rng = [] {
    std::random_device rd;
    std::seed_seq seq{rd(), rd(), rd(), rd(), rd(), rd(), rd(), rd()};
    return std::mt19937_64(seq);
  }();
  return rng;
}

}  // namespace

int64_t NewSnapshotId() {
  for (;;) {
    auto id = static_cast<int64_t>(Rng()() & 0x7fffffffffffffffULL);
    if (id != 0) return id;
  }
}

std::string NewUuid() {
  uint64_t hi = Rng()(), lo = Rng()();
  hi = (hi & ~0xf000ULL) | 0x4000ULL;                         // version 4
  lo = (lo & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // variant 10
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32, (hi >> 16) & 0xffff, hi & 0xffff, lo >> 48,
                     lo & 0xffffffffffffULL);
}

}  // namespace thaw::iceberg

// Table metadata (`*.metadata.json`, format v1-v3): schemas, partition specs,
// snapshots and refs, parsed into plain structs. Snapshot selection
// (--snapshot / --ref / --as-of) lives here too because it is pure metadata.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "thaw/common/status.h"
#include "thaw/iceberg/schema.h"
#include "thaw/iceberg/transform.h"

namespace thaw::iceberg {

struct PartitionField {
  std::vector<int32_t> source_ids;  // v3 multi-arg transforms; usually one
  int32_t field_id = 0;
  std::string name;
  Transform transform;
  int32_t source_id() const { return source_ids.empty() ? -1 : source_ids[0]; }
};

struct PartitionSpec {
  int32_t spec_id = 0;
  std::vector<PartitionField> fields;
  bool unpartitioned() const;  // no fields, or only void transforms
};

struct Snapshot {
  int64_t snapshot_id = 0;
  std::optional<int64_t> parent_snapshot_id;
  int64_t sequence_number = 0;
  int64_t timestamp_ms = 0;
  std::string manifest_list;              // empty for v1 inline manifests
  std::vector<std::string> v1_manifests;  // v1 `manifests`
  std::map<std::string, std::string> summary;
  std::optional<int32_t> schema_id;
  std::optional<int64_t> first_row_id;
  std::optional<int64_t> added_rows;  // v3: rows in the data files this snapshot added
  std::string operation() const;
};

struct SnapshotRef {
  int64_t snapshot_id = 0;
  std::string type;  // branch | tag
};

struct SnapshotLogEntry {
  int64_t timestamp_ms = 0;
  int64_t snapshot_id = 0;
};

struct TableMetadata {
  int format_version = 1;
  std::string table_uuid;
  std::string location;
  int64_t last_updated_ms = 0;
  int64_t last_sequence_number = 0;
  int32_t current_schema_id = 0;
  int32_t last_column_id = 0;  // the highest field id ever assigned (new fields take the next)
  std::vector<Schema> schemas;
  int32_t default_spec_id = 0;
  std::vector<PartitionSpec> specs;
  std::map<std::string, std::string> properties;
  std::optional<int64_t> current_snapshot_id;
  // Shared, immutable: the metadata a commit returns shares the snapshots
  // its base had (TableMetadata::FromJson's `reuse`), so a table of many
  // snapshots is not copied or freed whole at every commit.
  std::vector<std::shared_ptr<const Snapshot>> snapshots;
  std::vector<SnapshotLogEntry> snapshot_log;
  std::map<std::string, SnapshotRef> refs;
  std::optional<int64_t> next_row_id;

  // `source` names the file in error messages.
  static Result<TableMetadata> Parse(std::string_view json_text, std::string_view source);
  // The same from a parsed document (a commit's new metadata, not re-read).
  // `reuse`: metadata whose snapshots of the same id (and time and manifest
  // list) are taken as they are instead of parsed again.
  static Result<TableMetadata> FromJson(const nlohmann::json& doc, std::string_view source,
                                        const TableMetadata* reuse = nullptr);

  const Schema& current_schema() const;
  const Schema* SchemaById(int32_t id) const;
  const PartitionSpec* SpecById(int32_t id) const;
  const Snapshot* SnapshotById(int64_t id) const;
  const Snapshot* CurrentSnapshot() const;
  // The schema a snapshot was written with (falls back to the current one).
  const Schema& SchemaFor(const Snapshot& s) const;
  std::string Property(const std::string& key, const std::string& fallback = "") const;
};

// How the user picked a snapshot. At most one of the fields is set; none
// means the current snapshot (the `main` branch).
struct SnapshotSelector {
  std::optional<int64_t> snapshot_id;
  std::optional<std::string> ref;
  std::optional<int64_t> as_of_ms;
  bool empty() const { return !snapshot_id && !ref && !as_of_ms; }
};

// Resolves a selector. Returns nullptr (not an error) for a table with no
// snapshots yet when the selector is empty.
Result<const Snapshot*> SelectSnapshot(const TableMetadata& md, const SnapshotSelector& sel);

}  // namespace thaw::iceberg

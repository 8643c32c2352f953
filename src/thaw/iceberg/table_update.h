// Table commits as Iceberg's REST spec words them: requirements that must
// hold on the base metadata, and updates applied to it. The REST catalog
// sends them as they are (CommitTableRequest); catalogs that keep metadata
// files themselves (the SQL catalog) apply them here to the metadata JSON --
// unknown fields are kept -- write the result as the next metadata file and
// swap the pointer. New tables' first metadata is built here too.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/iceberg/table_metadata.h"

namespace thaw::iceberg {

struct TableRequirement {
  enum class Kind { kAssertCreate, kAssertTableUuid, kAssertRefSnapshotId, kAssertCurrentSchemaId };
  Kind kind = Kind::kAssertTableUuid;
  std::string uuid;                    // kAssertTableUuid
  std::string ref;                     // kAssertRefSnapshotId ("main")
  std::optional<int64_t> snapshot_id;  // kAssertRefSnapshotId; nullopt = the ref must not exist
  int32_t schema_id = 0;               // kAssertCurrentSchemaId

  static TableRequirement AssertTableUuid(std::string uuid);
  static TableRequirement AssertRefSnapshotId(std::string ref, std::optional<int64_t> snapshot_id);
  static TableRequirement AssertCurrentSchemaId(int32_t schema_id);
};

struct TableUpdate {
  enum class Kind {
    kAddSnapshot,
    kSetSnapshotRef,
    kRemoveSnapshotRef,
    kRemoveSnapshots,
    kSetProperties,
    kRemoveProperties,
    kAddSchema,
    kSetCurrentSchema
  };
  Kind kind = Kind::kAddSnapshot;
  Snapshot snapshot;                           // kAddSnapshot (summary must hold "operation")
  std::string ref_name;                        // kSetSnapshotRef, kRemoveSnapshotRef
  std::string ref_type = "branch";             // kSetSnapshotRef
  int64_t ref_snapshot_id = 0;                 // kSetSnapshotRef
  std::vector<int64_t> snapshot_ids;           // kRemoveSnapshots
  std::map<std::string, std::string> updates;  // kSetProperties
  std::vector<std::string> removals;           // kRemoveProperties
  nlohmann::json schema;                       // kAddSchema: the schema JSON with its "schema-id"
  int32_t last_column_id = 0;                  // kAddSchema: the table's last-column-id after it
  int32_t schema_id = -1;                      // kSetCurrentSchema (-1: the schema this commit added last)

  static TableUpdate AddSnapshot(Snapshot s);
  static TableUpdate SetBranch(std::string ref, int64_t snapshot_id);
  static TableUpdate SetTag(std::string ref, int64_t snapshot_id);
  // Removing "main" is refused by ApplyCommit (kInvalidArgument).
  static TableUpdate RemoveRef(std::string ref);
  static TableUpdate RemoveSnapshots(std::vector<int64_t> ids);
  static TableUpdate SetProperties(std::map<std::string, std::string> props);
  // Schema evolution (Iceberg's add-schema + set-current-schema): `schema`
  // must carry a schema-id no other schema of the table has, and field ids
  // not above `last_column_id`, which must not be below the table's.
  static TableUpdate AddSchema(nlohmann::json schema, int32_t last_column_id);
  static TableUpdate SetCurrentSchema(int32_t schema_id);
};

// The REST wire forms (Iceberg REST OpenAPI: TableRequirement, TableUpdate).
nlohmann::json ToJson(const TableRequirement& r);
nlohmann::json ToJson(const TableUpdate& u);
nlohmann::json SnapshotToJson(const Snapshot& s);

// Checks `requirements` against `base` (a parsed metadata JSON document) and
// applies `updates`, returning the new document: last-updated-ms = now_ms
// (or, as Iceberg Java does, the timestamp of a snapshot the commit adds),
// last-sequence-number / next-row-id advanced by added snapshots,
// snapshot-log appended for main moves, metadata-log gains
// {base_location, base last-updated-ms}, refs and current-snapshot-id kept in
// step. remove-snapshots also drops refs and statistics of the removed
// snapshots and, as Iceberg Java does, every snapshot-log entry up to the last
// one whose snapshot is gone (no gaps in the history); ids the table lacks are
// ignored. A failed requirement is kCommitConflict naming what differed; an
// update that cannot apply (snapshot id reused, sequence number not above the
// table's, unknown ref snapshot) is kInvalidArgument. `base` is taken by
// value: a caller that keeps the document (a catalog's last commit) moves it
// in rather than copying every snapshot.
Result<nlohmann::json> ApplyCommit(nlohmann::json base, const std::string& base_location,
                                   const std::vector<TableRequirement>& requirements,
                                   const std::vector<TableUpdate>& updates, int64_t now_ms);

// What a new table is made of (the REST CreateTableRequest's fields).
struct TableCreate {
  nlohmann::json schema;          // Iceberg schema JSON (with field ids, "schema-id": 0)
  nlohmann::json partition_spec;  // {"spec-id": 0, "fields": [...]}
  nlohmann::json sort_order;      // {"order-id": 1, "fields": [...]}; null = unsorted
  std::map<std::string, std::string> properties;
  std::string location;    // the table's location; empty = the catalog decides
  int format_version = 2;  // 2 or 3
  nlohmann::json ToRestRequest(const std::string& name) const;
};

// A new table's first metadata document (fresh table-uuid, no snapshots,
// last-column-id / last-partition-id from the schema and spec).
Result<nlohmann::json> NewTableMetadata(const TableCreate& create, int64_t now_ms);

// "<location>/metadata/<NNNNN>-<uuid>.metadata.json" with NNNNN one more than
// the version in `current`'s file name (its leading digits; a name without
// any counts as 0); 00000 when `current` is empty (a new table's first
// metadata). Iceberg Java and pyiceberg name them so.
std::string NextMetadataLocation(const std::string& table_location, const std::string& current);

// A random positive 63-bit id (snapshot ids) and a random v4 UUID string.
int64_t NewSnapshotId();
std::string NewUuid();

}  // namespace thaw::iceberg

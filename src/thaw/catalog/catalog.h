// Catalogs: where a table's current metadata is found. Thaw talks to a
// catalog only through this interface, so the SQL catalog (the JDBC schema
// shared by Iceberg Java and pyiceberg, on SQLite), a bare metadata file, and
// the REST catalog are interchangeable. Catalogs sit above the table format
// (iceberg/) and hand back loaded tables whose files are read through
// storage/'s FileIO.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/iceberg/table.h"
#include "thaw/iceberg/table_update.h"
#include "thaw/storage/property_map.h"

namespace thaw::catalog {

struct TableIdentifier {
  std::vector<std::string> ns;
  std::string name;
  // "ns.table" or "a.b.table" (last part is the table).
  static Result<TableIdentifier> Parse(std::string_view text);
  std::string ns_string() const;  // levels joined by '.'
  std::string ToString() const;
};

class Catalog {
 public:
  virtual ~Catalog() = default;
  virtual Result<iceberg::Table> LoadTable(const TableIdentifier& id) = 0;
  virtual Result<std::vector<TableIdentifier>> ListTables() = 0;
  virtual std::string description() const = 0;  // never a secret
  // Creates the namespace if it is missing (for archive). Default: Unsupported.
  virtual Status CreateNamespace(const std::vector<std::string>& ns);

  // Creates a table (archive --create). kAlreadyExists when it is there;
  // a missing namespace is created. `create.location` empty: the catalog's
  // default (REST: the server's; SQL: `<warehouse>/<ns>.db/<name>` from the
  // catalog's `warehouse` property, else kInvalidArgument asking for
  // --warehouse). Default: Unsupported.
  virtual Result<iceberg::Table> CreateTable(const TableIdentifier& id, const iceberg::TableCreate& create);

  // One optimistic commit of `updates` on `base` (as loaded), guarded by
  // `requirements`. kCommitConflict: the table moved (reload, re-apply,
  // retry); kCommitStateUnknown: the outcome is unknown -- never delete the
  // files the commit references. Returns the table as committed.
  // Default: Unsupported.
  virtual Result<iceberg::Table> CommitTable(const TableIdentifier& id, const iceberg::Table& base,
                                             const std::vector<iceberg::TableRequirement>& requirements,
                                             const std::vector<iceberg::TableUpdate>& updates);
};

// Points tag `name` of the table at `snapshot_id`, or removes it (nullopt);
// nothing is committed when it already is so. Retried (reload, re-check)
// when the table moves under it, up to 5 attempts.
Status MoveTag(Catalog& catalog, const TableIdentifier& id, const std::string& name,
               std::optional<int64_t> snapshot_id);

// Opens a catalog from a URI (any that OpenCatalog(const CatalogConfig&) in
// catalog_config.h takes, with no properties). `catalog_name` selects rows of
// the JDBC schema; empty = the only one present.
Result<std::unique_ptr<Catalog>> OpenCatalog(const std::string& uri, const std::string& catalog_name);

// A table with no catalog: a metadata.json location.
Result<iceberg::Table> LoadTableFromMetadata(const std::string& metadata_location);
// The same with storage properties (s3.endpoint, s3.access-key-id, ...; see docs/storage.md).
Result<iceberg::Table> LoadTableFromMetadata(const std::string& metadata_location,
                                             const storage::PropertyMap& properties);

}  // namespace thaw::catalog

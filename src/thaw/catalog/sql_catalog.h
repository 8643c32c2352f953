// The SQL catalog: the JDBC schema shared by Iceberg Java's JdbcCatalog and
// pyiceberg's SqlCatalog (tables iceberg_tables, iceberg_namespace_properties;
// schema V0, and V1 with iceberg_type), on SQLite or on PostgreSQL (libpq).
//
// URIs, as pyiceberg (SQLAlchemy) and JdbcCatalog write them:
//   sqlite:///relative/path.db, sqlite:////absolute/path.db, jdbc:sqlite:PATH
//   postgresql://user:pass@host:port/db, postgresql+psycopg2://user:pass@host:port/db
//   jdbc:postgresql://host:port/db   (credentials in properties jdbc.user, jdbc.password)
// Passwords never appear in description() or in errors: see RedactUri.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "thaw/catalog/catalog.h"
#include "thaw/catalog/catalog_config.h"
#include "thaw/storage/property_map.h"

namespace thaw::catalog {

// Where a SQL catalog lives, parsed from its URI and properties.
struct SqlTarget {
  enum class Backend { kSqlite, kPostgres };
  Backend backend = Backend::kSqlite;
  std::string sqlite_path;  // kSqlite: the database file
  std::string libpq_uri;    // kPostgres: postgresql://... as libpq takes it (may hold a password)
  std::string user;         // kPostgres: jdbc.user, overriding the URI's
  std::string password;     // kPostgres: jdbc.password, overriding the URI's
  std::string sslmode;      // kPostgres: jdbc.sslmode
  std::string redacted;     // the URI without its password, for messages
};

// Parses a SQL catalog URI (the forms above). Errors name the redacted URI.
Result<SqlTarget> ParseSqlUri(const std::string& uri, const storage::PropertyMap& properties);

// The URI with any password replaced by "***": the user-info password
// (scheme://user:PASS@host) and password=... query parameters.
std::string RedactUri(std::string_view uri);

class SqlBackend;
struct CommittedDocument;

class SqlCatalog : public Catalog {
 public:
  // config.uri is one of the URIs above; config.name selects rows of the
  // schema (empty = the only catalog name present, else "default").
  // Connects at once, so a wrong host or password fails here.
  static Result<std::unique_ptr<SqlCatalog>> Make(const CatalogConfig& config);
  ~SqlCatalog() override;

  Result<iceberg::Table> LoadTable(const TableIdentifier& id) override;
  Result<std::vector<TableIdentifier>> ListTables() override;
  std::string description() const override;
  // Adds the namespace's `exists` row when the namespace is missing (a
  // namespace holding tables exists already). Creates the JDBC tables (V1)
  // in a database that has none.
  Status CreateNamespace(const std::vector<std::string>& ns) override;

  // Writes the new table's first metadata (<location>/metadata/00000-<uuid>.metadata.json)
  // through the table's FileIO and registers it; the location defaults to
  // `<warehouse>/<ns>.db/<name>` (the catalog's `warehouse` property, as
  // pyiceberg's SqlCatalog). A table already there: kAlreadyExists (also
  // when another writer registers it first; the file written is deleted).
  Result<iceberg::Table> CreateTable(const TableIdentifier& id, const iceberg::TableCreate& create) override;
  // Applies the commit to base's metadata document (re-read from
  // base.metadata_location unless it is the document this catalog committed
  // last for the table, which it keeps parsed with its snapshots' text, so
  // that a commit does not re-read, re-parse and re-serialise the whole
  // history), writes the next metadata file and swaps the
  // pointer from base.metadata_location to it. Lost race: kCommitConflict
  // (the unreferenced file is deleted). A swap whose outcome cannot be
  // checked: kCommitStateUnknown (the file is kept).
  Result<iceberg::Table> CommitTable(const TableIdentifier& id, const iceberg::Table& base,
                                     const std::vector<iceberg::TableRequirement>& requirements,
                                     const std::vector<iceberg::TableUpdate>& updates) override;

  // Compare-and-swap of the table's metadata pointer: succeeds only while the
  // catalog still points at `expected_location`. Lost race: kCommitConflict
  // naming the table and both locations (reload the table and re-apply).
  // Missing table: kNotFound.
  Status SwapMetadataLocation(const TableIdentifier& id, const std::string& expected_location,
                              const std::string& new_location);
  // Registers a new table at this metadata location (INSERT). A table of that
  // name already there: kCommitConflict naming its current metadata (another
  // writer created it first: load it and commit onto it).
  Status RegisterTable(const TableIdentifier& id, const std::string& metadata_location);

  const std::string& catalog_name() const { return name_; }

 private:
  SqlCatalog(std::unique_ptr<SqlBackend> db, std::string name, storage::PropertyMap properties);
  Status DetectSchema();
  Status EnsureSchema();    // for writes
  Status NoSchema() const;  // the error when the database has no iceberg_tables table
  std::string TypeFilter() const;
  Result<std::optional<std::string>> CurrentLocation(const TableIdentifier& id);

  std::unique_ptr<SqlBackend> db_;
  std::string name_;
  storage::PropertyMap properties_;  // for the tables' storage: without uri and jdbc.*
  bool has_schema_ = false;
  bool v1_ = false;  // iceberg_tables has iceberg_type
  std::mutex committed_mu_;
  std::map<std::string, std::unique_ptr<CommittedDocument>> committed_;  // by table identifier
};

// sqlite:///relative/path.db or sqlite:////absolute/path.db (kept for callers
// of the old entry point; OpenCatalog(const CatalogConfig&) is the general one).
Result<std::unique_ptr<Catalog>> OpenSqliteCatalog(const std::string& uri, const std::string& catalog_name);

}  // namespace thaw::catalog

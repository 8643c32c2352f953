// Catalogs: where a table's current metadata file is found. Thaw talks to a
// catalog only through this interface, so the SQL catalog (SQLite, the JDBC
// schema shared by Iceberg Java and pyiceberg), a bare metadata file, and
// later a REST catalog are interchangeable.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/iceberg/table_metadata.h"
#include "thaw/storage/file_io.h"

namespace thaw::storage {

struct TableIdentifier {
  std::vector<std::string> ns;
  std::string name;
  // "ns.table" or "a.b.table" (last part is the table).
  static Result<TableIdentifier> Parse(std::string_view text);
  std::string ns_string() const;  // levels joined by '.'
  std::string ToString() const;
};

// A loaded table: its metadata and the FileIO that reads its files.
struct Table {
  std::string name;               // for messages: "ns.t" or the metadata path
  std::string metadata_location;
  iceberg::TableMetadata metadata;
  std::shared_ptr<FileIO> io;
};

class Catalog {
 public:
  virtual ~Catalog() = default;
  virtual Result<Table> LoadTable(const TableIdentifier& id) = 0;
  virtual Result<std::vector<TableIdentifier>> ListTables() = 0;
  virtual std::string description() const = 0;
};

// Opens a catalog from a URI: sqlite:///relative/path.db or
// sqlite:////absolute/path.db (SQLAlchemy's form, as pyiceberg uses).
// `catalog_name` selects rows of the JDBC schema; empty = the only one present.
Result<std::unique_ptr<Catalog>> OpenCatalog(const std::string& uri, const std::string& catalog_name);

// A table with no catalog: a metadata.json location.
Result<Table> LoadTableFromMetadata(const std::string& metadata_location);

}  // namespace thaw::storage

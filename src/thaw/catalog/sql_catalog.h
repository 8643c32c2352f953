// The SQL catalog: the JDBC schema shared by Iceberg Java's JdbcCatalog and
// pyiceberg's SqlCatalog (tables iceberg_tables, iceberg_namespace_properties).
#pragma once

#include <memory>
#include <string>

#include "thaw/catalog/catalog.h"

namespace thaw::catalog {

// sqlite:///relative/path.db or sqlite:////absolute/path.db.
Result<std::unique_ptr<Catalog>> OpenSqliteCatalog(const std::string& uri, const std::string& catalog_name);

}  // namespace thaw::catalog

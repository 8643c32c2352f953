// Which catalog, and with which properties: resolved once from the command
// line (--catalog, --catalog-property), the config file's [catalog] table,
// ~/.pyiceberg.yaml and PYICEBERG_CATALOG__NAME__KEY variables, so that a
// pyiceberg user's existing configuration works as is.
#pragma once

#include <string>

#include "thaw/storage/property_map.h"

namespace thaw::catalog {

struct CatalogConfig {
  // The catalog's name: a named catalog's name ("prod" in ~/.pyiceberg.yaml),
  // or for a URI given directly the JDBC catalog_name ("" = the only one in
  // the database) and "rest" for REST.
  std::string name;
  // "uri" is in properties too; `type` is "sql" or "rest" (from the
  // properties' "type", else inferred from the URI scheme).
  std::string type;
  std::string uri;
  storage::PropertyMap properties;  // everything, including uri, warehouse, s3.*, token, credential
};

}  // namespace thaw::catalog

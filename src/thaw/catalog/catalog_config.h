// Which catalog, and with which properties: resolved once from the command
// line (--catalog, --catalog-property), the config file's [catalog] table,
// ~/.pyiceberg.yaml and PYICEBERG_CATALOG__NAME__KEY variables, so that a
// pyiceberg user's existing configuration works as is.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "thaw/catalog/catalog.h"
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
  // Where each property came from, for messages: "--catalog-property",
  // "the [catalog] table of the config file", "PYICEBERG_CATALOG__PROD__URI",
  // "/home/me/.pyiceberg.yaml key catalog.prod.uri".
  std::map<std::string, std::string, std::less<>> sources;

  // "sql catalog 'prod' at postgresql://me:***@db:5432/iceberg (from ...)": never a secret.
  std::string Describe() const;
};

// pyiceberg's configuration: the first .pyiceberg.yaml found in
// $PYICEBERG_HOME, then the home directory, then the working directory, with
// PYICEBERG_CATALOG__NAME__KEY environment variables over it (env wins).
struct PyicebergConfig {
  std::string file;                   // the .pyiceberg.yaml read; "" = none found
  std::vector<std::string> searched;  // where it was looked for
  // Catalog name (lower-cased, as pyiceberg looks names up) -> properties.
  std::map<std::string, storage::PropertyMap> catalogs;
  // Catalog name -> property -> where it came from.
  std::map<std::string, std::map<std::string, std::string, std::less<>>> sources;
};

// Parses a .pyiceberg.yaml's text (`catalog: {NAME: {KEY: VALUE}}`; keys are
// lower-cased as pyiceberg does). Errors name `file` and the key.
Status ParsePyicebergYaml(const std::string& text, const std::string& file, PyicebergConfig* out);

// Applies PYICEBERG_CATALOG__NAME__KEY variables, pyiceberg's way: the
// variable's name is lower-cased, "pyiceberg_" dropped, split at the first two
// "__"; in each part "__" becomes "." and "_" becomes "-"
// (PYICEBERG_CATALOG__PROD__S3__ACCESS_KEY_ID -> catalog prod, s3.access-key-id).
// An empty value does not replace a value from the file.
void ApplyPyicebergEnvironment(const std::vector<std::pair<std::string, std::string>>& env, PyicebergConfig* out);

// Reads the file (searching as above) and the process environment.
Result<PyicebergConfig> LoadPyicebergConfig();

// catalog_arg: --catalog value. A URI with a scheme (sqlite:, postgresql:, postgresql+psycopg2:, jdbc:,
// http:, https:) is used directly; otherwise it is a catalog NAME looked up in ~/.pyiceberg.yaml (or
// $PYICEBERG_HOME/.pyiceberg.yaml) and PYICEBERG_CATALOG__NAME__KEY variables (env wins over yaml, as in
// pyiceberg). With no catalog_arg, the "uri" property (from --catalog-property or the config file) is the URI.
// Precedence of properties: --catalog-property > [catalog] table of the config file > env > yaml.
// catalog_name_flag (--catalog-name) overrides the JDBC catalog name.
Result<CatalogConfig> ResolveCatalogConfig(const std::string& catalog_arg,
                                           const std::vector<std::string>& property_args,  // "k=v"
                                           const storage::PropertyMap& config_file_properties,
                                           const std::string& catalog_name_flag);
// The same with a given pyiceberg configuration (for tests).
Result<CatalogConfig> ResolveCatalogConfig(const std::string& catalog_arg,
                                           const std::vector<std::string>& property_args,
                                           const storage::PropertyMap& config_file_properties,
                                           const std::string& catalog_name_flag, const PyicebergConfig& pyiceberg);

// Opens the catalog: type "sql" -> SqlCatalog, "rest" -> OpenRestCatalog.
Result<std::unique_ptr<Catalog>> OpenCatalog(const CatalogConfig& config);

}  // namespace thaw::catalog

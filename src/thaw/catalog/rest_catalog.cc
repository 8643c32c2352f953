#include "thaw/catalog/rest_catalog.h"

namespace thaw::catalog {

// Placeholder until the REST client lands (issue 9, same change set).
Result<std::unique_ptr<Catalog>> OpenRestCatalog(const CatalogConfig& config) {
  return Status::Unsupported("catalog {}: the REST catalog client is not built into this Thaw", config.uri);
}

}  // namespace thaw::catalog

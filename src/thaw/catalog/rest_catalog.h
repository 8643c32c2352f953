// The Iceberg REST catalog client (open-api/rest-catalog-open-api.yaml).
#pragma once

#include <memory>

#include "thaw/catalog/catalog.h"
#include "thaw/catalog/catalog_config.h"

namespace thaw::catalog {

// config.uri is http(s)://HOST:PORT[/path]. Fetches /v1/config at once, so a
// wrong URI or credential fails here with a clear message.
Result<std::unique_ptr<Catalog>> OpenRestCatalog(const CatalogConfig& config);

}  // namespace thaw::catalog

// String properties as Iceberg catalogs and FileIOs take them ("s3.endpoint",
// "client.region", "token", ...): from --catalog-property, the [catalog]
// table of the config file, ~/.pyiceberg.yaml, a REST catalog's /v1/config
// and a loaded table's config and vended storage credentials.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace thaw::storage {

using PropertyMap = std::map<std::string, std::string, std::less<>>;

// True for keys whose values are secrets (secret keys, session tokens,
// passwords, OAuth2 credentials and tokens, SAS tokens, account keys): they
// never appear in logs, errors or --json output.
bool IsSecretProperty(std::string_view key);

}  // namespace thaw::storage

// Parsing of the Iceberg REST catalog's response bodies
// (open-api/rest-catalog-open-api.yaml) and of OAuth2 token responses. The
// bodies come from the network (an untrusted server): every function here
// returns a Status for any input and never throws. Built into thaw_base
// (no curl, no Arrow) so that fuzz/rest_messages_fuzz.cc can reach it.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "thaw/catalog/catalog.h"
#include "thaw/common/status.h"
#include "thaw/iceberg/table_metadata.h"
#include "thaw/storage/property_map.h"

namespace thaw::catalog::rest {

struct StorageCredential {
  std::string prefix;
  storage::PropertyMap config;
};

// GET /v1/config (CatalogConfig).
struct ConfigResponse {
  storage::PropertyMap defaults;
  storage::PropertyMap overrides;
  // The server announced idempotency-key-lifetime: it honours Idempotency-Key.
  bool idempotency_keys = false;
};

struct ListNamespacesPage {
  std::vector<std::vector<std::string>> namespaces;
  std::string next_page_token;  // empty on the last page
};

struct ListTablesPage {
  std::vector<TableIdentifier> identifiers;
  std::string next_page_token;  // empty on the last page
};

// LoadTableResult (load, create and commit responses).
struct LoadTableResponse {
  std::string metadata_location;  // may be empty (e.g. a staged create)
  iceberg::TableMetadata metadata;
  std::string location;  // the metadata's location, else metadata_location
  storage::PropertyMap config;
  std::vector<StorageCredential> storage_credentials;
};

struct OAuthToken {
  std::string access_token;
  std::optional<std::chrono::seconds> expires_in;
};

// Longest token lifetime honoured; a larger expires_in is clamped to it.
inline constexpr std::chrono::seconds kMaxTokenLifetime{10LL * 365 * 24 * 3600};

// `what` names the request in error messages ("listing namespaces: GET <url>").
// JSON objects of properties take non-string values as their JSON text.
Result<ConfigResponse> ParseConfigResponse(std::string_view body, std::string_view what);
Result<ListNamespacesPage> ParseListNamespaces(std::string_view body, std::string_view what);
// Identifiers without a namespace are in `ns` (the listed namespace).
Result<ListTablesPage> ParseListTables(std::string_view body, const std::vector<std::string>& ns,
                                       std::string_view what);
Result<LoadTableResponse> ParseLoadTable(std::string_view body, std::string_view what);
Result<OAuthToken> ParseTokenResponse(std::string_view body, std::string_view what);

// The server's message from an ErrorModel body ({"error": {message, type,
// code}}) as "type: message", the <title> of an HTML error page, or a short
// one-line excerpt of any other body. Empty for an empty body.
std::string ParseErrorResponse(std::string_view body);
// The detail of a refused OAuth2 token request (RFC 6749 error_description or
// error, or an ErrorModel's message); empty when there is none.
std::string ParseTokenError(std::string_view body);

}  // namespace thaw::catalog::rest

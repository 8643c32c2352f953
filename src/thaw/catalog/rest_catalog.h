// The Iceberg REST catalog client (open-api/rest-catalog-open-api.yaml):
// GET /v1/config, multi-level namespaces, paginated table lists, loading
// tables with vended storage credentials, and for archive (issue 10)
// creating namespaces and tables and committing requirements + updates.
#pragma once

#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "thaw/catalog/catalog.h"
#include "thaw/catalog/catalog_config.h"
#include "thaw/catalog/http_client.h"
#include "thaw/catalog/rest_auth.h"
#include "thaw/catalog/rest_messages.h"

namespace thaw::catalog {

// config.uri is http(s)://HOST:PORT[/path]. Fetches /v1/config at once, so a
// wrong URI or credential fails here with a clear message.
Result<std::unique_ptr<Catalog>> OpenRestCatalog(const CatalogConfig& config);

class RestCatalog : public Catalog {
 public:
  static Result<std::unique_ptr<RestCatalog>> Make(const CatalogConfig& config);
  ~RestCatalog() override;

  // Loads with X-Iceberg-Access-Delegation: vended-credentials; the table's
  // FileIO gets the catalog properties, the response's config and the
  // storage credential whose prefix is the longest match of the table location.
  Result<iceberg::Table> LoadTable(const TableIdentifier& id) override;
  // Every table of every namespace, namespaces listed recursively.
  Result<std::vector<TableIdentifier>> ListTables() override;
  std::string description() const override;

  Result<std::vector<std::vector<std::string>>> ListNamespaces(const std::vector<std::string>& parent);
  Result<std::vector<TableIdentifier>> ListTables(const std::vector<std::string>& ns);

  // Creates the namespace (and its missing ancestors); one that exists is fine.
  Status CreateNamespace(const std::vector<std::string>& ns) override;
  // The Catalog interface: the namespace is created when missing, then the
  // request below with TableCreate::ToRestRequest; a table already there
  // (409) is kAlreadyExists.
  Result<iceberg::Table> CreateTable(const TableIdentifier& id, const iceberg::TableCreate& create) override;
  // The CommitTableRequest below with the requirements' and updates' REST
  // forms; the server checks the requirements against its current metadata
  // (`base` is not needed).
  Result<iceberg::Table> CommitTable(const TableIdentifier& id, const iceberg::Table& base,
                                     const std::vector<iceberg::TableRequirement>& requirements,
                                     const std::vector<iceberg::TableUpdate>& updates) override;

  // POST .../tables with the spec's CreateTableRequest (`name`, `schema`, ...);
  // the name in the request is set from `id`. 409 (exists) -> kCommitConflict.
  Result<iceberg::Table> CreateTable(const TableIdentifier& id, const nlohmann::json& request);
  // POST .../tables/{table} with a CommitTableRequest. 200 -> the new table;
  // 409 -> kCommitConflict (reload, re-apply); 500/502/503/504 or a lost
  // response -> kCommitStateUnknown (never delete the files written for it).
  Result<iceberg::Table> CommitTable(const TableIdentifier& id, const nlohmann::json& requirements,
                                     const nlohmann::json& updates);

  // The merged catalog properties (config defaults < given < overrides).
  const storage::PropertyMap& properties() const { return properties_; }
  bool idempotency_keys() const { return idempotency_keys_; }
  int64_t http_retries() const;

 private:
  struct Call;
  RestCatalog() = default;
  Status FetchConfig(const CatalogConfig& config);
  Result<HttpResponse> Execute(Call& call, TransportFailure* failure = nullptr);
  Status ErrorFor(const Call& call, const HttpResponse& response, std::string_view what) const;
  std::string Path(std::string_view tail) const;  // "/v1/{prefix}/" + tail
  std::string NamespacePath(const std::vector<std::string>& ns) const;
  Result<iceberg::Table> TableFromLoadResult(const TableIdentifier& id, const std::string& body, std::string_view what);

  std::string base_;  // uri without a trailing '/'
  std::string prefix_;
  std::string separator_ = "%1F";
  std::string warehouse_;
  storage::PropertyMap properties_;
  HttpHeaders extra_headers_;  // header.* properties
  bool idempotency_keys_ = false;
  int page_size_ = 0;
  std::mutex mu_;  // one request at a time: the curl handle and the OAuth2 token are shared
  std::unique_ptr<HttpClient> http_;
  std::unique_ptr<RestAuth> auth_;
};

namespace rest {

// /v1/config's merge: the server's defaults, overridden by the client's
// properties, overridden by the server's overrides.
storage::PropertyMap MergeConfig(const storage::PropertyMap& defaults, const storage::PropertyMap& client,
                                 const storage::PropertyMap& overrides);

// A namespace in a URL path or the `parent` query parameter: each level
// percent-encoded, joined by `separator` (already URL-encoded: "%1F" by
// default, or the config's namespace-separator).
std::string EncodeNamespace(const std::vector<std::string>& ns, std::string_view separator);

// The credential whose prefix is the longest prefix of `location`, or null.
const StorageCredential* ChooseStorageCredential(std::string_view location,
                                                 const std::vector<StorageCredential>& credentials);

// The properties for a loaded table's FileIO: catalog properties < the load
// result's config < the chosen storage credential's config.
storage::PropertyMap TableIOProperties(const storage::PropertyMap& catalog, const storage::PropertyMap& table_config,
                                       const std::vector<StorageCredential>& credentials, std::string_view location);

// A UUIDv7 string for Idempotency-Key.
std::string NewIdempotencyKey();

}  // namespace rest

}  // namespace thaw::catalog

#include "thaw/catalog/rest_catalog.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <set>
#include <tuple>

#include "thaw/common/log.h"
#include "thaw/storage/file_io_registry.h"

namespace thaw::catalog {

namespace {

std::string PropOr(const storage::PropertyMap& props, std::string_view key, std::string fallback = "") {
  auto it = props.find(key);
  return it == props.end() ? fallback : it->second;
}

Result<int64_t> IntProp(const storage::PropertyMap& props, std::string_view key, int64_t fallback) {
  auto it = props.find(key);
  if (it == props.end() || it->second.empty()) return fallback;
  try {
    size_t used = 0;
    int64_t v = std::stoll(it->second, &used);
    if (used == it->second.size() && v >= 0) return v;
  } catch (...) {
  }
  return Status::Invalid("catalog property '{}' = '{}' is not a non-negative integer", key, it->second);
}

std::string ServerMessage(const std::string& body) { return rest::ParseErrorResponse(body); }

Result<std::shared_ptr<storage::FileIO>> TableFileIO(const std::string& location,
                                                     const storage::PropertyMap& properties) {
  return storage::FileIOFor(location, properties);
}

}  // namespace

struct RestCatalog::Call {
  std::string method = "GET";
  std::string path;                                        // absolute path below base_, "/v1/..."
  std::vector<std::pair<std::string, std::string>> query;  // values already encoded
  HttpHeaders headers;
  std::string body;
  RetryPolicy policy = RetryPolicy::kIdempotent;
  std::string Url(const std::string& base) const {
    std::string url = base + path;
    for (size_t i = 0; i < query.size(); ++i) url += (i ? "&" : "?") + query[i].first + "=" + query[i].second;
    return url;
  }
};

// --- pure helpers ---

namespace rest {

storage::PropertyMap MergeConfig(const storage::PropertyMap& defaults, const storage::PropertyMap& client,
                                 const storage::PropertyMap& overrides) {
  storage::PropertyMap merged = defaults;
  for (const auto& [k, v] : client) merged[k] = v;
  for (const auto& [k, v] : overrides) merged[k] = v;
  return merged;
}

std::string EncodeNamespace(const std::vector<std::string>& ns, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < ns.size(); ++i) {
    if (i) out += separator;
    out += PercentEncode(ns[i]);
  }
  return out;
}

const StorageCredential* ChooseStorageCredential(std::string_view location,
                                                 const std::vector<StorageCredential>& credentials) {
  const StorageCredential* best = nullptr;
  for (const auto& c : credentials) {
    if (location.starts_with(c.prefix) && (best == nullptr || c.prefix.size() > best->prefix.size())) best = &c;
  }
  return best;
}

storage::PropertyMap TableIOProperties(const storage::PropertyMap& catalog, const storage::PropertyMap& table_config,
                                       const std::vector<StorageCredential>& credentials, std::string_view location) {
  storage::PropertyMap merged = catalog;
  for (const auto& [k, v] : table_config) merged[k] = v;
  if (const auto* c = ChooseStorageCredential(location, credentials)) {
    for (const auto& [k, v] : c->config) merged[k] = v;
  }
  return merged;
}

std::string NewIdempotencyKey() {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  uint64_t ms = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
  uint64_t r1 = rng(), r2 = rng();
  uint64_t hi = (ms << 16) | 0x7000 | (r1 & 0x0fff);                   // 48-bit time, version 7, 12 random bits
  uint64_t lo = (r2 & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // variant 10
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32, (hi >> 16) & 0xffff, hi & 0xffff, lo >> 48,
                     lo & 0xffffffffffffULL);
}

}  // namespace rest

// --- the client ---

Result<std::unique_ptr<Catalog>> OpenRestCatalog(const CatalogConfig& config) {
  ASSIGN_OR_RAISE(auto catalog, RestCatalog::Make(config));
  return std::unique_ptr<Catalog>(std::move(catalog));
}

RestCatalog::~RestCatalog() = default;

int64_t RestCatalog::http_retries() const { return http_->retries(); }

Result<std::unique_ptr<RestCatalog>> RestCatalog::Make(const CatalogConfig& config) {
  std::string uri = config.uri.empty() ? PropOr(config.properties, "uri") : config.uri;
  if (!(uri.starts_with("http://") || uri.starts_with("https://"))) {
    return Status::Invalid("REST catalog uri '{}' must start with http:// or https://", RedactUrl(uri));
  }
  while (uri.ends_with('/')) uri.pop_back();
  std::unique_ptr<RestCatalog> c(new RestCatalog());
  c->base_ = uri;
  const auto& props = config.properties;
  HttpOptions options;
  ASSIGN_OR_RAISE(auto connect_ms, IntProp(props, "rest.client.connection-timeout-ms", 10'000));
  ASSIGN_OR_RAISE(auto socket_ms, IntProp(props, "rest.client.socket-timeout-ms", 60'000));
  ASSIGN_OR_RAISE(auto retries, IntProp(props, "rest.client.max-retries", 4));
  options.connect_timeout = std::chrono::milliseconds(connect_ms);
  options.request_timeout = std::chrono::milliseconds(socket_ms);
  options.max_attempts = static_cast<int>(retries) + 1;
  ASSIGN_OR_RAISE(c->http_, HttpClient::Make(options));
  ASSIGN_OR_RAISE(c->auth_, MakeRestAuth(uri, props, c->http_.get()));
  RETURN_NOT_OK(c->FetchConfig(config));
  return c;
}

Status RestCatalog::FetchConfig(const CatalogConfig& config) {
  warehouse_ = PropOr(config.properties, "warehouse");
  for (const auto& [k, v] : config.properties) {
    if (k.starts_with("header.")) extra_headers_.emplace_back(k.substr(7), v);
  }
  Call call;
  call.path = "/v1/config";
  if (!warehouse_.empty()) call.query.emplace_back("warehouse", PercentEncode(warehouse_));
  ASSIGN_OR_RAISE(auto response, Execute(call));
  if (response.status != 200) return ErrorFor(call, response, "reading the catalog configuration");
  auto config_response = rest::ParseConfigResponse(response.body, fmt::format("GET {}", RedactUrl(call.Url(base_))));
  if (!config_response.ok()) {
    return config_response.status().WithContext(
        fmt::format("reading the catalog configuration (is '{}' an Iceberg REST catalog?)", RedactUrl(base_)));
  }
  const storage::PropertyMap& defaults = config_response->defaults;
  const storage::PropertyMap& overrides = config_response->overrides;
  properties_ = rest::MergeConfig(defaults, config.properties, overrides);
  prefix_ = PropOr(properties_, "prefix");
  while (prefix_.ends_with('/')) prefix_.pop_back();
  separator_ = PropOr(properties_, "namespace-separator", "%1F");
  if (auto it = overrides.find("uri"); it != overrides.end() && !it->second.empty() && it->second != base_) {
    base_ = it->second;
    while (base_.ends_with('/')) base_.pop_back();
  }
  idempotency_keys_ = config_response->idempotency_keys;
  ASSIGN_OR_RAISE(auto page_size, IntProp(properties_, "rest-page-size", 0));
  page_size_ = static_cast<int>(page_size);
  log::Debug("REST catalog {}: prefix '{}', namespace separator '{}', idempotency keys {}", RedactUrl(base_), prefix_,
             separator_, idempotency_keys_);
  return Status::OK();
}

std::string RestCatalog::description() const {
  return warehouse_.empty() ? fmt::format("REST catalog {}", RedactUrl(base_))
                            : fmt::format("REST catalog {} (warehouse '{}')", RedactUrl(base_), warehouse_);
}

std::string RestCatalog::Path(std::string_view tail) const {
  return prefix_.empty() ? fmt::format("/v1/{}", tail) : fmt::format("/v1/{}/{}", prefix_, tail);
}

std::string RestCatalog::NamespacePath(const std::vector<std::string>& ns) const {
  return Path("namespaces/" + rest::EncodeNamespace(ns, separator_));
}

Result<HttpResponse> RestCatalog::Execute(Call& call, TransportFailure* failure) {
  std::lock_guard lock(mu_);
  HttpRequest request;
  request.method = call.method;
  request.url = call.Url(base_);
  request.body = call.body;
  request.headers = extra_headers_;
  request.headers.emplace_back("Accept", "application/json");
  if (!call.body.empty()) request.headers.emplace_back("Content-Type", "application/json");
  request.headers.emplace_back("X-Client-Version", "thaw");
  for (const auto& h : call.headers) request.headers.push_back(h);
  auto prepare = [this](HttpRequest& r) { return auth_->Apply(r); };
  ASSIGN_OR_RAISE(auto response, http_->Send(request, call.policy, prepare, failure));
  if (response.status == 401) {
    // A token may have been revoked or expired early: fetch a new one once.
    ASSIGN_OR_RAISE(bool refreshed, auth_->RefreshAfterUnauthorized());
    if (refreshed) {
      log::Debug("{} {}: HTTP 401, retrying once with a new token", call.method, RedactUrl(request.url));
      ASSIGN_OR_RAISE(response, http_->Send(request, call.policy, prepare, failure));
    }
  }
  return response;
}

Status RestCatalog::ErrorFor(const Call& call, const HttpResponse& response, std::string_view what) const {
  std::string where = fmt::format("{} {}", call.method, RedactUrl(call.Url(base_)));
  std::string server = ServerMessage(response.body);
  std::string head =
      fmt::format("{}: {}: HTTP {}{}{}", what, where, response.status, server.empty() ? "" : ": ", server);
  switch (response.status) {
    case 401:
    case 403:
      return Status::PermissionDenied("{}: {} refused {}; {}", head, description(), auth_->Describe(), auth_->Advice());
    case 404:
      return Status::NotFound("{}", head);
    case 409:
      return Status::CommitConflict("{}", head);
    case 400:
    case 406:
    case 422:
      return Status::Invalid("{}", head);
    default:
      if (IsRetryableStatus(response.status)) {
        return Status::IOError("{} (after {} attempts; the catalog is overloaded or unavailable, try again later)",
                               head, http_->options().max_attempts);
      }
      return Status::IOError("{}", head);
  }
}

Result<std::vector<std::vector<std::string>>> RestCatalog::ListNamespaces(const std::vector<std::string>& parent) {
  std::vector<std::vector<std::string>> out;
  std::string token;
  bool first = true;
  while (first || !token.empty()) {
    Call call;
    call.path = Path("namespaces");
    if (!parent.empty()) call.query.emplace_back("parent", rest::EncodeNamespace(parent, separator_));
    if (page_size_ > 0) call.query.emplace_back("pageSize", std::to_string(page_size_));
    if (!token.empty() || (first && page_size_ > 0)) call.query.emplace_back("pageToken", PercentEncode(token));
    first = false;
    ASSIGN_OR_RAISE(auto response, Execute(call));
    std::string what = parent.empty() ? std::string("listing namespaces")
                                      : fmt::format("listing the namespaces in '{}'", fmt::join(parent, "."));
    if (response.status != 200) return ErrorFor(call, response, what);
    ASSIGN_OR_RAISE(auto page, rest::ParseListNamespaces(response.body,
                                                         fmt::format("{}: GET {}", what, RedactUrl(call.Url(base_)))));
    for (auto& ns : page.namespaces) out.push_back(std::move(ns));
    std::string next_token = std::move(page.next_page_token);
    if (!next_token.empty() && next_token == token) {
      return Status::Corrupt("{}: the catalog returned the same next-page-token twice", what);
    }
    token = next_token;
  }
  return out;
}

Result<std::vector<TableIdentifier>> RestCatalog::ListTables(const std::vector<std::string>& ns) {
  std::vector<TableIdentifier> out;
  std::string token;
  bool first = true;
  std::string what = fmt::format("listing the tables in namespace '{}'", fmt::join(ns, "."));
  while (first || !token.empty()) {
    Call call;
    call.path = NamespacePath(ns) + "/tables";
    if (page_size_ > 0) call.query.emplace_back("pageSize", std::to_string(page_size_));
    if (!token.empty() || (first && page_size_ > 0)) call.query.emplace_back("pageToken", PercentEncode(token));
    first = false;
    ASSIGN_OR_RAISE(auto response, Execute(call));
    if (response.status != 200) return ErrorFor(call, response, what);
    ASSIGN_OR_RAISE(auto page, rest::ParseListTables(response.body, ns,
                                                     fmt::format("{}: GET {}", what, RedactUrl(call.Url(base_)))));
    for (auto& t : page.identifiers) out.push_back(std::move(t));
    std::string next_token = std::move(page.next_page_token);
    if (!next_token.empty() && next_token == token) {
      return Status::Corrupt("{}: the catalog returned the same next-page-token twice", what);
    }
    token = next_token;
  }
  return out;
}

Result<std::vector<TableIdentifier>> RestCatalog::ListTables() {
  std::vector<TableIdentifier> out;
  std::set<std::vector<std::string>> seen;
  std::vector<std::vector<std::string>> pending = {{}};
  while (!pending.empty()) {
    auto parent = std::move(pending.back());
    pending.pop_back();
    ASSIGN_OR_RAISE(auto children, ListNamespaces(parent));
    for (auto& ns : children) {
      if (ns.empty() || !seen.insert(ns).second) continue;
      ASSIGN_OR_RAISE(auto tables, ListTables(ns));
      for (auto& t : tables) out.push_back(std::move(t));
      pending.push_back(std::move(ns));
    }
  }
  std::sort(out.begin(), out.end(), [](const TableIdentifier& a, const TableIdentifier& b) {
    return std::tie(a.ns, a.name) < std::tie(b.ns, b.name);
  });
  return out;
}

Result<iceberg::Table> RestCatalog::TableFromLoadResult(const TableIdentifier& id, const std::string& body,
                                                        std::string_view what) {
  ASSIGN_OR_RAISE(auto loaded, rest::ParseLoadTable(body, what));
  const std::string& metadata_location = loaded.metadata_location;
  const std::string& location = loaded.location;
  auto io_props = rest::TableIOProperties(properties_, loaded.config, loaded.storage_credentials, location);
  iceberg::Table table;
  table.name = id.ToString();
  table.metadata_location = metadata_location;
  table.metadata = std::move(loaded.metadata);
  auto io = TableFileIO(location.empty() ? metadata_location : location, io_props);
  if (!io.ok()) return io.status().WithContext(fmt::format("{}: table {}", what, id.ToString()));
  table.io = std::move(*io);
  return table;
}

Result<iceberg::Table> RestCatalog::LoadTable(const TableIdentifier& id) {
  Call call;
  call.path = NamespacePath(id.ns) + "/tables/" + PercentEncode(id.name);
  call.headers.emplace_back("X-Iceberg-Access-Delegation", "vended-credentials");
  std::string what = fmt::format("loading table '{}'", id.ToString());
  ASSIGN_OR_RAISE(auto response, Execute(call));
  if (response.status == 404) {
    return Status::NotFound("{}: no such table in {} (HTTP 404: {}); check the namespace and table name", what,
                            description(), ServerMessage(response.body));
  }
  if (response.status != 200) return ErrorFor(call, response, what);
  return TableFromLoadResult(id, response.body, what);
}

Status RestCatalog::CreateNamespace(const std::vector<std::string>& ns) {
  for (size_t depth = 1; depth <= ns.size(); ++depth) {
    std::vector<std::string> level(ns.begin(), ns.begin() + depth);
    Call call;
    call.method = "POST";
    call.path = Path("namespaces");
    call.body = nlohmann::json{{"namespace", level}, {"properties", nlohmann::json::object()}}.dump();
    // Creating a namespace twice is harmless (409 below), so retries are safe.
    call.policy = RetryPolicy::kIdempotent;
    ASSIGN_OR_RAISE(auto response, Execute(call));
    if (response.status == 200 || response.status == 409) continue;
    return ErrorFor(call, response, fmt::format("creating namespace '{}'", fmt::join(level, ".")));
  }
  return Status::OK();
}

Result<iceberg::Table> RestCatalog::CreateTable(const TableIdentifier& id, const nlohmann::json& request) {
  Call call;
  call.method = "POST";
  call.path = NamespacePath(id.ns) + "/tables";
  nlohmann::json body = request;
  body["name"] = id.name;
  call.body = body.dump();
  call.headers.emplace_back("X-Iceberg-Access-Delegation", "vended-credentials");
  call.policy = RetryPolicy::kNotSent;
  if (idempotency_keys_) {
    call.headers.emplace_back("Idempotency-Key", rest::NewIdempotencyKey());
    call.policy = RetryPolicy::kIdempotent;
  }
  std::string what = fmt::format("creating table '{}'", id.ToString());
  TransportFailure failure = TransportFailure::kNone;
  auto response = Execute(call, &failure);
  if (!response.ok()) {
    if (failure == TransportFailure::kLost) {
      return Status::CommitStateUnknown("{}: {}; the table may or may not exist now: load it to find out", what,
                                        response.status().message());
    }
    return response.status().WithContext(what);
  }
  if (response->status == 409) {
    return Status::CommitConflict("{}: it already exists in {} ({})", what, description(),
                                  ServerMessage(response->body));
  }
  if (response->status == 500 || response->status == 502 || response->status == 503 || response->status == 504) {
    return Status::CommitStateUnknown("{}: HTTP {}: {}; the table may or may not exist now: load it to find out", what,
                                      response->status, ServerMessage(response->body));
  }
  if (response->status != 200) return ErrorFor(call, *response, what);
  return TableFromLoadResult(id, response->body, what);
}

Result<iceberg::Table> RestCatalog::CreateTable(const TableIdentifier& id, const iceberg::TableCreate& create) {
  RETURN_NOT_OK(CreateNamespace(id.ns));
  auto table = CreateTable(id, create.ToRestRequest(id.name));
  if (!table.ok() && table.status().code() == StatusCode::kCommitConflict) {
    return Status::AlreadyExists("{}", table.status().message());
  }
  return table;
}

Result<iceberg::Table> RestCatalog::CommitTable(const TableIdentifier& id, const iceberg::Table&,
                                                const std::vector<iceberg::TableRequirement>& requirements,
                                                const std::vector<iceberg::TableUpdate>& updates) {
  nlohmann::json reqs = nlohmann::json::array(), ups = nlohmann::json::array();
  for (const auto& r : requirements) reqs.push_back(iceberg::ToJson(r));
  for (const auto& u : updates) ups.push_back(iceberg::ToJson(u));
  return CommitTable(id, reqs, ups);
}

Result<iceberg::Table> RestCatalog::CommitTable(const TableIdentifier& id, const nlohmann::json& requirements,
                                                const nlohmann::json& updates) {
  Call call;
  call.method = "POST";
  call.path = NamespacePath(id.ns) + "/tables/" + PercentEncode(id.name);
  call.body = nlohmann::json{
      {"identifier", {{"namespace", id.ns}, {"name", id.name}}},
      {"requirements", requirements},
      {"updates",
       updates}}.dump();
  // Without an Idempotency-Key a commit is retried only when it never reached
  // the server (connection refused) or the server said it did not act (429, 503).
  call.policy = RetryPolicy::kNotSent;
  if (idempotency_keys_) {
    call.headers.emplace_back("Idempotency-Key", rest::NewIdempotencyKey());
    call.policy = RetryPolicy::kIdempotent;
  }
  std::string what = fmt::format("committing to table '{}'", id.ToString());
  TransportFailure failure = TransportFailure::kNone;
  auto response = Execute(call, &failure);
  if (!response.ok()) {
    if (failure == TransportFailure::kLost) {
      return Status::CommitStateUnknown(
          "{}: {}; the commit may or may not have been applied: keep the files written for it and reload the table",
          what, response.status().message());
    }
    return response.status().WithContext(what);  // never sent: nothing was committed
  }
  switch (response->status) {
    case 200:
      return TableFromLoadResult(id, response->body, what);
    case 409:
      return Status::CommitConflict("{}: a requirement no longer holds ({}); reload the table and re-apply", what,
                                    ServerMessage(response->body));
    case 500:
    case 502:
    case 503:
    case 504:
      return Status::CommitStateUnknown(
          "{}: HTTP {}: {}; the commit may or may not have been applied: keep the files written for it and reload "
          "the table",
          what, response->status, ServerMessage(response->body));
    default:
      return ErrorFor(call, *response, what);
  }
}

}  // namespace thaw::catalog

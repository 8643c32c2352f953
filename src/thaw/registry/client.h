// A client of a Confluent-compatible schema registry (Confluent Schema
// Registry, Karapace, Apicurio's ccompat API, AxonOps, Redpanda's registry):
// the one registry client of every face (archive decodes by the id in each
// record; replay and serve find or register the schemas they encode with).
// On catalog::HttpClient, the REST catalog's HTTP client: timeouts, bounded
// retries with backoff on 429, 5xx and connection failures (every registry
// request used here is idempotent), the next URL of a list when one is down.
// Thread-safe; answers are cached (bounded) by id and by (subject, schema).
// Requests that miss the caches go one at a time over one kept-alive
// connection (the HTTP client's curl handle): what the faces need is a few
// schemas per topic, each fetched once.
// Errors name the request (method and URL without userinfo or query), the
// HTTP status and the registry's error_code and message, never a credential.
#pragma once

#include <chrono>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "thaw/catalog/http_client.h"
#include "thaw/common/status.h"
#include "thaw/records/schema_references.h"
#include "thaw/registry/wire.h"
#include "thaw/storage/property_map.h"

namespace thaw::registry {

struct RegistryOptions {
  std::vector<std::string> urls;  // base URLs (http or https), tried in order
  // Basic auth: "USER:PASSWORD" (basic.auth.user.info with
  // basic.auth.credentials.source=USER_INFO, or the userinfo of the URL with
  // source=URL). Empty: none.
  std::string basic_user_info;
  std::string bearer_token;  // Authorization: Bearer …; empty: none
  std::string ca_file;       // ssl.ca.location
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds request_timeout{30'000};
  int max_retries = 3;  // retries after the first attempt
  std::chrono::milliseconds retry_wait{100};
  std::chrono::milliseconds retry_max_wait{5'000};
  size_t cache_capacity = 1000;  // entries per cache

  // From Confluent's client property names (those of confluent-kafka's
  // SchemaRegistryClient): url (comma-separated), basic.auth.user.info,
  // basic.auth.credentials.source (USER_INFO, URL), bearer.auth.token,
  // bearer.auth.credentials.source (STATIC_TOKEN), ssl.ca.location,
  // timeout / request.timeout.ms, max.retries, retries.wait.ms,
  // retries.max.wait.ms, cache.capacity. Secrets may be references
  // (@FILE, ${env:NAME}, common/secrets.h). `origin` starts errors ("-X").
  static Result<RegistryOptions> FromProperties(const storage::PropertyMap& properties, std::string_view origin);
};

// A bounded least-recently-used map (not thread-safe: the client locks).
template <typename K, typename V, typename Hash = std::hash<K>>
class LruCache {
 public:
  explicit LruCache(size_t capacity) : capacity_(capacity) {}
  std::optional<V> Get(const K& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return std::nullopt;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }
  void Put(const K& key, V value) {
    if (capacity_ == 0) return;
    auto it = index_.find(key);
    if (it != index_.end()) {
      it->second->second = std::move(value);
      order_.splice(order_.begin(), order_, it->second);
      return;
    }
    if (index_.size() >= capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    order_.emplace_front(key, std::move(value));
    index_.emplace(key, order_.begin());
  }
  size_t size() const { return index_.size(); }

 private:
  size_t capacity_;
  std::list<std::pair<K, V>> order_;
  std::unordered_map<K, typename std::list<std::pair<K, V>>::iterator, Hash> index_;
};

// The Status for a registry's non-2xx answer to `what` ("GET <url>"):
// NotFound for 404 (40401 subject, 40402 version, 40403 schema), Invalid for
// 409 (incompatible) and 422 (invalid schema), PermissionDenied for 401/403
// (naming the credential source, `auth`), IOError otherwise. Pure.
Status RegistryHttpError(std::string_view what, long http_status, std::string_view body, std::string_view auth);

class SchemaRegistry {
 public:
  static Result<std::unique_ptr<SchemaRegistry>> Make(RegistryOptions options);
  ~SchemaRegistry();

  // GET /schemas/ids/ID (cached).
  Result<Schema> SchemaById(int32_t id);
  // GET /subjects/SUBJECT/versions/latest (not cached: it moves).
  Result<SubjectVersion> LatestVersion(const std::string& subject);
  // GET /subjects/SUBJECT/versions/VERSION (-1: latest).
  Result<SubjectVersion> Version(const std::string& subject, int32_t version);
  // The texts of every schema `schema` refers to, through its references
  // and theirs (each fetched by subject and version), each once, a schema's
  // own references before it: what a codec parses first. At most 16 levels
  // and 256 schemas; errors name the reference.
  Result<records::SchemaReferences> ResolveReferences(const Schema& schema);
  // POST /subjects/SUBJECT/versions[?normalize=true]: the schema's id, the
  // existing one when the subject already has it (cached by subject and
  // schema). An incompatible schema is Invalid with the registry's reason.
  Result<int32_t> Register(const std::string& subject, const Schema& schema, bool normalize = false);
  // POST /subjects/SUBJECT[?normalize=true]: id and version of the schema
  // under the subject, NotFound when the subject does not have it (cached).
  Result<SubjectVersion> Lookup(const std::string& subject, const Schema& schema, bool normalize = false);

  const RegistryOptions& options() const { return options_; }
  int64_t http_requests() const;

 private:
  explicit SchemaRegistry(RegistryOptions options, std::unique_ptr<catalog::HttpClient> http);
  // One request, over each URL in turn while they are unreachable; a non-2xx
  // answer is the Status of RegistryHttpError.
  Result<std::string> Call(const std::string& method, const std::string& path, const std::string& body);
  std::string AuthDescription() const;

  RegistryOptions options_;
  mutable std::mutex http_mu_;
  std::unique_ptr<catalog::HttpClient> http_;
  int64_t http_requests_ = 0;
  size_t preferred_url_ = 0;

  mutable std::mutex cache_mu_;
  LruCache<int32_t, Schema> by_id_;
  // Key: subject, '\0', normalize flag, '\0', the request body (text, type, references).
  LruCache<std::string, int32_t> registered_;
  LruCache<std::string, SubjectVersion> looked_up_;
};

}  // namespace thaw::registry

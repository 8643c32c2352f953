#include "thaw/registry/client.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>
#include <set>

#include "thaw/common/secrets.h"

namespace thaw::registry {

namespace {

std::string Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '/')) s.remove_suffix(1);
  return std::string(s);
}

std::string Upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return out;
}

Result<int64_t> NonNegative(const storage::PropertyMap& p, std::string_view key, std::string_view origin,
                            int64_t fallback) {
  auto it = p.find(key);
  if (it == p.end()) return fallback;
  int64_t v = 0;
  const auto& s = it->second;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) {
    return Status::Invalid("{}: {}='{}' is not a non-negative integer", origin, key, s);
  }
  return v;
}

// Splits "scheme://user:pass@host/..." into the URL without userinfo and the
// percent-decoded "user:pass".
std::pair<std::string, std::string> SplitUserInfo(const std::string& url) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return {url, ""};
  auto start = scheme_end + 3;
  auto path = url.find('/', start);
  auto at = url.rfind('@', path == std::string::npos ? std::string::npos : path);
  if (at == std::string::npos || at < start) return {url, ""};
  std::string info = url.substr(start, at - start);
  std::string decoded;
  for (size_t i = 0; i < info.size(); ++i) {
    if (info[i] == '%' && i + 2 < info.size() && std::isxdigit(static_cast<unsigned char>(info[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(info[i + 2]))) {
      decoded.push_back(static_cast<char>(std::stoi(info.substr(i + 1, 2), nullptr, 16)));
      i += 2;
    } else {
      decoded.push_back(info[i]);
    }
  }
  return {url.substr(0, start) + url.substr(at + 1), decoded};
}

std::string Base64(std::string_view in) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t n = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    out += {kAlphabet[n >> 18], kAlphabet[(n >> 12) & 63], kAlphabet[(n >> 6) & 63], kAlphabet[n & 63]};
  }
  if (i + 1 == in.size()) {
    uint32_t n = uint8_t(in[i]) << 16;
    out += {kAlphabet[n >> 18], kAlphabet[(n >> 12) & 63], '=', '='};
  } else if (i + 2 == in.size()) {
    uint32_t n = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    out += {kAlphabet[n >> 18], kAlphabet[(n >> 12) & 63], kAlphabet[(n >> 6) & 63], '='};
  }
  return out;
}

std::string CacheKey(const std::string& subject, const Schema& schema, bool normalize) {
  std::string key = subject;
  key.push_back('\0');
  key.push_back(normalize ? '1' : '0');
  key.push_back('\0');
  key += SchemaRequestBody(schema);
  return key;
}

}  // namespace

Result<RegistryOptions> RegistryOptions::FromProperties(const storage::PropertyMap& p, std::string_view origin) {
  RegistryOptions o;
  auto url = p.find("url");
  if (url == p.end() || Trim(url->second).empty()) {
    return Status::Invalid("{}: no schema registry url (url=http://HOST:8081, several comma-separated)", origin);
  }
  std::string_view rest = url->second;
  while (!rest.empty()) {
    auto comma = rest.find(',');
    std::string one = Trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (one.empty()) continue;
    if (one.rfind("http://", 0) != 0 && one.rfind("https://", 0) != 0) {
      return Status::Invalid("{}: the schema registry url '{}' is not http:// or https://", origin,
                             catalog::RedactUrl(one));
    }
    o.urls.push_back(std::move(one));
  }
  std::string source = "USER_INFO";
  if (auto it = p.find("basic.auth.credentials.source"); it != p.end()) source = Upper(it->second);
  if (source == "URL") {
    for (auto& u : o.urls) {
      auto [bare, info] = SplitUserInfo(u);
      if (!info.empty() && o.basic_user_info.empty()) o.basic_user_info = info;
      u = bare;
    }
    if (o.basic_user_info.empty()) {
      return Status::Invalid("{}: basic.auth.credentials.source=URL but no url has USER:PASSWORD@ in it", origin);
    }
  } else if (source == "USER_INFO") {
    if (auto it = p.find("basic.auth.user.info"); it != p.end() && !it->second.empty()) {
      ASSIGN_OR_RAISE(o.basic_user_info, ResolveSecretReference("basic.auth.user.info", it->second, origin));
      if (o.basic_user_info.find(':') == std::string::npos) {
        return Status::Invalid("{}: basic.auth.user.info is not USER:PASSWORD (it has no ':')", origin);
      }
    }
  } else {
    return Status::Invalid("{}: basic.auth.credentials.source={} is not supported (USER_INFO or URL)", origin, source);
  }
  for (auto& u : o.urls) {
    if (u.find('@') != std::string::npos && u.find('@') < u.find('/', u.find("://") + 3)) {
      // Userinfo in a URL without source=URL: still never shown, and not sent twice.
      u = SplitUserInfo(u).first;
    }
  }
  if (auto it = p.find("bearer.auth.credentials.source"); it != p.end() && Upper(it->second) != "STATIC_TOKEN") {
    return Status::Invalid("{}: bearer.auth.credentials.source={} is not supported (STATIC_TOKEN)", origin, it->second);
  }
  if (auto it = p.find("bearer.auth.token"); it != p.end() && !it->second.empty()) {
    ASSIGN_OR_RAISE(o.bearer_token, ResolveSecretReference("bearer.auth.token", it->second, origin));
  }
  if (!o.bearer_token.empty() && !o.basic_user_info.empty()) {
    return Status::Invalid("{}: both basic auth and bearer.auth.token are set; the registry takes one", origin);
  }
  if (auto it = p.find("ssl.ca.location"); it != p.end()) o.ca_file = it->second;
  ASSIGN_OR_RAISE(int64_t timeout, NonNegative(p, "request.timeout.ms", origin, o.request_timeout.count()));
  if (auto it = p.find("timeout"); it != p.end()) {  // confluent-kafka-python: seconds
    ASSIGN_OR_RAISE(int64_t s, NonNegative(p, "timeout", origin, 0));
    timeout = s * 1000;
  }
  o.request_timeout = std::chrono::milliseconds(timeout);
  ASSIGN_OR_RAISE(int64_t retries, NonNegative(p, "max.retries", origin, o.max_retries));
  o.max_retries = static_cast<int>(std::min<int64_t>(retries, 100));
  ASSIGN_OR_RAISE(int64_t wait, NonNegative(p, "retries.wait.ms", origin, o.retry_wait.count()));
  o.retry_wait = std::chrono::milliseconds(wait);
  ASSIGN_OR_RAISE(int64_t max_wait, NonNegative(p, "retries.max.wait.ms", origin, o.retry_max_wait.count()));
  o.retry_max_wait = std::chrono::milliseconds(max_wait);
  ASSIGN_OR_RAISE(int64_t capacity, NonNegative(p, "cache.capacity", origin, static_cast<int64_t>(o.cache_capacity)));
  o.cache_capacity = static_cast<size_t>(capacity);
  static constexpr std::string_view kKnown[] = {"url",
                                                "basic.auth.user.info",
                                                "basic.auth.credentials.source",
                                                "bearer.auth.token",
                                                "bearer.auth.credentials.source",
                                                "ssl.ca.location",
                                                "request.timeout.ms",
                                                "timeout",
                                                "max.retries",
                                                "retries.wait.ms",
                                                "retries.max.wait.ms",
                                                "cache.capacity"};
  for (const auto& [k, v] : p) {
    if (std::find(std::begin(kKnown), std::end(kKnown), k) == std::end(kKnown)) {
      return Status::Invalid(
          "{}: unknown schema registry setting '{}' (known: url, basic.auth.user.info, "
          "basic.auth.credentials.source, bearer.auth.token, ssl.ca.location, timeout, "
          "max.retries, retries.wait.ms, retries.max.wait.ms, cache.capacity)",
          origin, k);
    }
  }
  return o;
}

Status RegistryHttpError(std::string_view what, long http_status, std::string_view body, std::string_view auth) {
  RegistryError e = ParseErrorResponse(body);
  std::string detail = fmt::format("HTTP {}", http_status);
  if (e.error_code) detail += fmt::format(", error {}", *e.error_code);
  if (!e.message.empty()) detail += ": " + e.message;
  switch (http_status) {
    case 404:
      return Status::NotFound("schema registry: {}: {}", what, detail);
    case 409:
      return Status::Invalid(
          "schema registry: {}: {} (the schema is incompatible with the subject's earlier "
          "versions under its compatibility level)",
          what, detail);
    case 422:
      return Status::Invalid("schema registry: {}: {} (the registry refused the schema as invalid)", what, detail);
    case 401:
    case 403:
      return Status::PermissionDenied("schema registry: {}: {} ({}: check the user, password or token)", what, detail,
                                      auth);
    default:
      return Status::IOError("schema registry: {}: {}", what, detail);
  }
}

Result<std::unique_ptr<SchemaRegistry>> SchemaRegistry::Make(RegistryOptions options) {
  if (options.urls.empty()) return Status::Invalid("schema registry: no url");
  catalog::HttpOptions http;
  http.connect_timeout = options.connect_timeout;
  http.request_timeout = options.request_timeout;
  http.max_attempts = options.max_retries + 1;
  http.initial_backoff = options.retry_wait;
  http.max_backoff = options.retry_max_wait;
  http.retry_server_errors = true;
  http.ca_file = options.ca_file;
  http.max_response_bytes = 64LL << 20;
  ASSIGN_OR_RAISE(auto client, catalog::HttpClient::Make(http));
  return std::unique_ptr<SchemaRegistry>(new SchemaRegistry(std::move(options), std::move(client)));
}

SchemaRegistry::SchemaRegistry(RegistryOptions options, std::unique_ptr<catalog::HttpClient> http)
    : options_(std::move(options)),
      http_(std::move(http)),
      by_id_(options_.cache_capacity),
      registered_(options_.cache_capacity),
      looked_up_(options_.cache_capacity) {}

SchemaRegistry::~SchemaRegistry() = default;

int64_t SchemaRegistry::http_requests() const {
  std::lock_guard lock(http_mu_);
  return http_requests_;
}

std::string SchemaRegistry::AuthDescription() const {
  if (!options_.bearer_token.empty()) return "sent the bearer token of bearer.auth.token";
  if (!options_.basic_user_info.empty()) {
    std::string user = options_.basic_user_info.substr(0, options_.basic_user_info.find(':'));
    return fmt::format("sent basic auth as user '{}'", user);
  }
  return "sent no credentials (basic.auth.user.info or bearer.auth.token)";
}

Result<std::string> SchemaRegistry::Call(const std::string& method, const std::string& path, const std::string& body) {
  std::lock_guard lock(http_mu_);
  Status last;
  for (size_t n = 0; n < options_.urls.size(); ++n) {
    size_t which = (preferred_url_ + n) % options_.urls.size();
    catalog::HttpRequest request;
    request.method = method;
    request.url = options_.urls[which] + path;
    request.headers.emplace_back("Accept", "application/vnd.schemaregistry.v1+json, application/json");
    if (method == "POST") request.headers.emplace_back("Content-Type", "application/vnd.schemaregistry.v1+json");
    if (!options_.bearer_token.empty()) {
      request.headers.emplace_back("Authorization", "Bearer " + options_.bearer_token);
    } else if (!options_.basic_user_info.empty()) {
      request.headers.emplace_back("Authorization", "Basic " + Base64(options_.basic_user_info));
    }
    request.body = body;
    std::string what = fmt::format("{} {}", method, catalog::RedactUrl(request.url));
    ++http_requests_;
    catalog::TransportFailure failure = catalog::TransportFailure::kNone;
    auto response = http_->Send(std::move(request), catalog::RetryPolicy::kIdempotent, nullptr, &failure);
    if (!response.ok()) {
      // Unreachable: the next URL, if any.
      last = Status::IOError("schema registry: {} (is the registry running and reachable at {}?)",
                             response.status().message(), catalog::RedactUrl(options_.urls[which]));
      continue;
    }
    preferred_url_ = which;
    if (response->status >= 200 && response->status < 300) return std::move(response->body);
    return RegistryHttpError(what, response->status, response->body, AuthDescription());
  }
  return last;
}

Result<Schema> SchemaRegistry::SchemaById(int32_t id) {
  {
    std::lock_guard lock(cache_mu_);
    if (auto hit = by_id_.Get(id)) return std::move(*hit);
  }
  std::string path = fmt::format("/schemas/ids/{}", id);
  auto body = Call("GET", path, "");
  if (!body.ok()) {
    if (body.status().code() == StatusCode::kNotFound) {
      return body.status().WithContext(fmt::format("no schema with id {} in the registry", id));
    }
    return body.status();
  }
  ASSIGN_OR_RAISE(Schema schema, ParseSchemaResponse(*body, "schema registry: GET " + path));
  std::lock_guard lock(cache_mu_);
  by_id_.Put(id, schema);
  return schema;
}

Result<SubjectVersion> SchemaRegistry::LatestVersion(const std::string& subject) {
  std::string path = "/subjects/" + catalog::PercentEncode(subject) + "/versions/latest";
  ASSIGN_OR_RAISE(std::string body, Call("GET", path, ""));
  ASSIGN_OR_RAISE(SubjectVersion v, ParseSubjectVersionResponse(body, "schema registry: GET " + path));
  std::lock_guard lock(cache_mu_);
  by_id_.Put(v.id, v.schema);
  return v;
}

Result<SubjectVersion> SchemaRegistry::Version(const std::string& subject, int32_t version) {
  if (version < 0) return LatestVersion(subject);
  std::string path = "/subjects/" + catalog::PercentEncode(subject) + fmt::format("/versions/{}", version);
  ASSIGN_OR_RAISE(std::string body, Call("GET", path, ""));
  ASSIGN_OR_RAISE(SubjectVersion v, ParseSubjectVersionResponse(body, "schema registry: GET " + path));
  std::lock_guard lock(cache_mu_);
  by_id_.Put(v.id, v.schema);
  return v;
}

Result<records::SchemaReferences> SchemaRegistry::ResolveReferences(const Schema& schema) {
  constexpr int kMaxDepth = 16;
  constexpr size_t kMaxSchemas = 256;
  records::SchemaReferences out;
  std::set<std::string> done, visiting;
  std::function<Status(const Schema&, int)> walk = [&](const Schema& s, int depth) -> Status {
    for (const auto& r : s.references) {
      if (done.count(r.name)) continue;
      const std::string what = fmt::format("reference '{}' (subject '{}', version {})", r.name, r.subject, r.version);
      if (depth >= kMaxDepth || !visiting.insert(r.name).second) {
        return Status::Invalid("schema registry: {} is nested deeper than {} levels or refers to itself", what,
                               kMaxDepth);
      }
      auto v = Version(r.subject, r.version);
      if (!v.ok()) return v.status().WithContext("schema registry: fetching " + what);
      RETURN_NOT_OK(walk(v->schema, depth + 1));
      visiting.erase(r.name);
      if (out.size() >= kMaxSchemas) {
        return Status::Invalid("schema registry: more than {} referenced schemas", kMaxSchemas);
      }
      done.insert(r.name);
      out.push_back({r.name, v->schema.text});
    }
    return Status::OK();
  };
  RETURN_NOT_OK(walk(schema, 0));
  return out;
}

Result<int32_t> SchemaRegistry::Register(const std::string& subject, const Schema& schema, bool normalize) {
  std::string key = CacheKey(subject, schema, normalize);
  {
    std::lock_guard lock(cache_mu_);
    if (auto hit = registered_.Get(key)) return *hit;
  }
  std::string path = "/subjects/" + catalog::PercentEncode(subject) + "/versions";
  if (normalize) path += "?normalize=true";
  ASSIGN_OR_RAISE(std::string body, Call("POST", path, SchemaRequestBody(schema)));
  ASSIGN_OR_RAISE(int32_t id, ParseRegisterResponse(body, "schema registry: POST " + path));
  std::lock_guard lock(cache_mu_);
  registered_.Put(key, id);
  return id;
}

Result<SubjectVersion> SchemaRegistry::Lookup(const std::string& subject, const Schema& schema, bool normalize) {
  std::string key = CacheKey(subject, schema, normalize);
  {
    std::lock_guard lock(cache_mu_);
    if (auto hit = looked_up_.Get(key)) return std::move(*hit);
  }
  std::string path = "/subjects/" + catalog::PercentEncode(subject);
  if (normalize) path += "?normalize=true";
  ASSIGN_OR_RAISE(std::string body, Call("POST", path, SchemaRequestBody(schema)));
  ASSIGN_OR_RAISE(SubjectVersion v, ParseSubjectVersionResponse(body, "schema registry: POST " + path));
  std::lock_guard lock(cache_mu_);
  looked_up_.Put(key, v);
  return v;
}

}  // namespace thaw::registry

#include "thaw/catalog/rest_auth.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ctime>
#include <map>

#include "thaw/catalog/rest_messages.h"
#include "thaw/common/log.h"

namespace thaw::catalog {

namespace {

std::string Hex(const unsigned char* data, size_t n) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(kHex[data[i] >> 4]);
    out.push_back(kHex[data[i] & 15]);
  }
  return out;
}

std::string Hmac(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
       data.size(), out, &len);
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Trims and collapses runs of spaces, as SigV4's canonical header values want.
std::string CanonicalHeaderValue(std::string_view v) {
  std::string out;
  bool space = false;
  for (char c : v) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
    } else {
      if (space) out.push_back(' ');
      space = false;
      out.push_back(c);
    }
  }
  return out;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && HexValue(s[i + 1]) >= 0 && HexValue(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2])));
      i += 2;
    } else if (s[i] == '+') {
      out.push_back(' ');
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

struct UrlParts {
  std::string host;  // host[:port] as in the URL
  std::string path;
  std::string query;
};

Result<UrlParts> SplitUrl(std::string_view url) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return Status::Invalid("'{}' is not an absolute URL", RedactUrl(url));
  std::string_view rest = url.substr(scheme_end + 3);
  UrlParts parts;
  auto path_start = rest.find_first_of("/?");
  parts.host = std::string(rest.substr(0, path_start));
  if (auto at = parts.host.find('@'); at != std::string::npos) parts.host = parts.host.substr(at + 1);
  if (path_start == std::string_view::npos) return parts;
  std::string_view tail = rest.substr(path_start);
  auto q = tail.find('?');
  parts.path = std::string(tail.substr(0, q));
  if (q != std::string_view::npos) parts.query = std::string(tail.substr(q + 1));
  return parts;
}

std::string EnvOr(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string PropOr(const storage::PropertyMap& props, std::string_view key, std::string fallback = "") {
  auto it = props.find(key);
  return it == props.end() ? fallback : it->second;
}

std::string AmzDateNow() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

void SetHeader(HttpRequest& request, std::string_view name, std::string value) {
  std::string key = Lower(name);
  std::erase_if(request.headers, [&](const auto& h) { return Lower(h.first) == key; });
  request.headers.emplace_back(std::string(name), std::move(value));
}

// --- bearer token ---
class BearerAuth : public RestAuth {
 public:
  explicit BearerAuth(std::string token) : token_(std::move(token)) {}
  Status Apply(HttpRequest& request) override {
    SetHeader(request, "Authorization", "Bearer " + token_);
    return Status::OK();
  }
  std::string Describe() const override { return "the bearer token in property 'token'"; }
  std::string Advice() const override {
    return "check that the token is current and grants access to this catalog (set it with --catalog-property "
           "token=..., the [catalog] table or ~/.pyiceberg.yaml)";
  }

 private:
  std::string token_;
};

class NoAuth : public RestAuth {
 public:
  Status Apply(HttpRequest&) override { return Status::OK(); }
  std::string Describe() const override { return "no credential (no 'token', 'credential' or rest.sigv4-enabled)"; }
  std::string Advice() const override {
    return "the catalog needs credentials: set 'token' (bearer) or 'credential' (OAuth2 client_id:client_secret)";
  }
};

// --- OAuth2 client credentials ---
class OAuth2Auth : public RestAuth {
 public:
  OAuth2Auth(std::string token_uri, std::string client_id, std::string client_secret, std::string scope,
             HttpClient* http)
      : token_uri_(std::move(token_uri)),
        client_id_(std::move(client_id)),
        client_secret_(std::move(client_secret)),
        scope_(std::move(scope)),
        http_(http) {}

  Status Apply(HttpRequest& request) override {
    if (token_.empty() || lifetime_.NeedsRefresh(std::chrono::steady_clock::now())) RETURN_NOT_OK(Fetch());
    SetHeader(request, "Authorization", "Bearer " + token_);
    return Status::OK();
  }

  Result<bool> RefreshAfterUnauthorized() override {
    token_.clear();
    RETURN_NOT_OK(Fetch());
    return true;
  }

  std::string Describe() const override {
    return fmt::format("the OAuth2 client credentials in property 'credential' (token endpoint {}, scope '{}')",
                       RedactUrl(token_uri_), scope_);
  }
  std::string Advice() const override {
    return "check the client id and secret in 'credential' (client_id:client_secret), 'oauth2-server-uri' and "
           "'scope', and that the client may use this catalog";
  }

 private:
  Status Fetch() {
    std::vector<std::pair<std::string, std::string>> form = {{"grant_type", "client_credentials"}};
    if (!client_id_.empty()) form.emplace_back("client_id", client_id_);
    form.emplace_back("client_secret", client_secret_);
    if (!scope_.empty()) form.emplace_back("scope", scope_);
    HttpRequest request;
    request.method = "POST";
    request.url = token_uri_;
    request.headers = {{"Content-Type", "application/x-www-form-urlencoded"}, {"Accept", "application/json"}};
    request.body = FormEncode(form);
    auto obtained = std::chrono::steady_clock::now();
    // A token request changes nothing on the server: safe to retry.
    ASSIGN_OR_RAISE(auto response, http_->Send(std::move(request), RetryPolicy::kIdempotent));
    if (response.status != 200) {
      std::string detail = rest::ParseTokenError(response.body);
      std::string msg =
          fmt::format("POST {}: HTTP {}{}{}: the OAuth2 token request with {} was refused; {}", RedactUrl(token_uri_),
                      response.status, detail.empty() ? "" : ": ", detail, Describe(), Advice());
      if (response.status == 400 || response.status == 401 || response.status == 403) {
        return Status::PermissionDenied("{}", msg);
      }
      return Status::IOError("{}", msg);
    }
    ASSIGN_OR_RAISE(auto token, rest::ParseTokenResponse(response.body, fmt::format("POST {}", RedactUrl(token_uri_))));
    token_ = std::move(token.access_token);
    lifetime_.obtained = obtained;
    lifetime_.expires_in = token.expires_in;
    log::Debug("OAuth2 token from {} (expires in {} s)", RedactUrl(token_uri_),
               lifetime_.expires_in ? lifetime_.expires_in->count() : -1);
    return Status::OK();
  }

  std::string token_uri_, client_id_, client_secret_, scope_;
  HttpClient* http_;
  std::string token_;
  TokenLifetime lifetime_;
};

// --- SigV4, around an optional bearer/OAuth2 auth whose Authorization moves
// to Original-Authorization (as Iceberg Java's RESTSigV4Signer does) ---
class SigV4Auth : public RestAuth {
 public:
  SigV4Auth(std::unique_ptr<RestAuth> inner, SigV4Credentials creds, std::string creds_source, std::string region,
            std::string service)
      : inner_(std::move(inner)),
        creds_(std::move(creds)),
        creds_source_(std::move(creds_source)),
        region_(std::move(region)),
        service_(std::move(service)) {}

  Status Apply(HttpRequest& request) override {
    if (inner_) {
      RETURN_NOT_OK(inner_->Apply(request));
      for (auto& [k, v] : request.headers) {
        if (Lower(k) == "authorization") k = "Original-Authorization";
      }
    }
    ASSIGN_OR_RAISE(auto parts, SplitUrl(request.url));
    std::string date = AmzDateNow();
    SetHeader(request, "Host", parts.host);
    SetHeader(request, "X-Amz-Date", date);
    SetHeader(request, "X-Amz-Content-SHA256", Sha256Hex(request.body));
    if (!creds_.session_token.empty()) SetHeader(request, "X-Amz-Security-Token", creds_.session_token);
    ASSIGN_OR_RAISE(auto sig, SignSigV4(request, creds_, date, region_, service_));
    SetHeader(request, "Authorization", sig.authorization);
    return Status::OK();
  }
  Result<bool> RefreshAfterUnauthorized() override {
    if (inner_) return inner_->RefreshAfterUnauthorized();
    return false;
  }
  std::string Describe() const override {
    std::string s = fmt::format("SigV4 signing (region '{}', service '{}') with the AWS keys from {}", region_,
                                service_, creds_source_);
    if (inner_) s += ", and " + inner_->Describe();
    return s;
  }
  std::string Advice() const override {
    return "check the access key, secret and session token, 'rest.signing-region' and 'rest.signing-name', and "
           "that the identity may call this endpoint";
  }

 private:
  std::unique_ptr<RestAuth> inner_;
  SigV4Credentials creds_;
  std::string creds_source_, region_, service_;
};

}  // namespace

std::chrono::steady_clock::time_point TokenLifetime::RefreshAt() const {
  if (!expires_in) return std::chrono::steady_clock::time_point::max();
  std::chrono::seconds margin = std::min<std::chrono::seconds>(*expires_in / 10, std::chrono::seconds(60));
  return obtained + *expires_in - margin;
}

bool TokenLifetime::NeedsRefresh(std::chrono::steady_clock::time_point now) const { return now >= RefreshAt(); }

std::string Sha256Hex(std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), out, &len, EVP_sha256(), nullptr);
  return Hex(out, len);
}

Result<SigV4Signature> SignSigV4(const HttpRequest& request, const SigV4Credentials& credentials,
                                 std::string_view amz_date, std::string_view region, std::string_view service) {
  if (amz_date.size() != 16) return Status::Invalid("SigV4: bad date '{}', want YYYYMMDDTHHMMSSZ", amz_date);
  ASSIGN_OR_RAISE(auto parts, SplitUrl(request.url));
  // Canonical URI: the path as sent, encoded once more (all services but S3).
  std::string canonical_uri;
  for (char c : parts.path.empty() ? std::string("/") : parts.path) {
    canonical_uri += c == '/' ? std::string("/") : PercentEncode(std::string_view(&c, 1));
  }
  // Canonical query: decoded pairs re-encoded, sorted.
  std::vector<std::pair<std::string, std::string>> query;
  size_t pos = 0;
  while (!parts.query.empty() && pos <= parts.query.size()) {
    size_t amp = parts.query.find('&', pos);
    std::string_view item = std::string_view(parts.query).substr(pos, amp == std::string::npos ? amp : amp - pos);
    if (!item.empty()) {
      size_t eq = item.find('=');
      query.emplace_back(PercentEncode(PercentDecode(item.substr(0, eq))),
                         eq == std::string_view::npos ? "" : PercentEncode(PercentDecode(item.substr(eq + 1))));
    }
    if (amp == std::string::npos) break;
    pos = amp + 1;
  }
  std::sort(query.begin(), query.end());
  std::string canonical_query;
  for (const auto& [k, v] : query) canonical_query += (canonical_query.empty() ? "" : "&") + k + "=" + v;
  // Canonical headers: every header of the request, lower-cased and sorted.
  std::map<std::string, std::string> headers;
  for (const auto& [k, v] : request.headers) {
    auto& slot = headers[Lower(k)];
    slot += (slot.empty() ? "" : ",") + CanonicalHeaderValue(v);
  }
  std::string canonical_headers, signed_headers;
  for (const auto& [k, v] : headers) {
    canonical_headers += k + ":" + v + "\n";
    signed_headers += (signed_headers.empty() ? "" : ";") + k;
  }
  SigV4Signature sig;
  sig.signed_headers = signed_headers;
  sig.canonical_request = fmt::format("{}\n{}\n{}\n{}\n{}\n{}", request.method, canonical_uri, canonical_query,
                                      canonical_headers, signed_headers, Sha256Hex(request.body));
  std::string_view day = amz_date.substr(0, 8);
  std::string scope = fmt::format("{}/{}/{}/aws4_request", day, region, service);
  sig.string_to_sign = fmt::format("AWS4-HMAC-SHA256\n{}\n{}\n{}", amz_date, scope, Sha256Hex(sig.canonical_request));
  std::string key = Hmac("AWS4" + credentials.secret_access_key, day);
  key = Hmac(key, region);
  key = Hmac(key, service);
  key = Hmac(key, "aws4_request");
  std::string raw = Hmac(key, sig.string_to_sign);
  sig.signature = Hex(reinterpret_cast<const unsigned char*>(raw.data()), raw.size());
  sig.authorization = fmt::format("AWS4-HMAC-SHA256 Credential={}/{}, SignedHeaders={}, Signature={}",
                                  credentials.access_key_id, scope, signed_headers, sig.signature);
  return sig;
}

Result<std::unique_ptr<RestAuth>> MakeRestAuth(const std::string& base_uri, const storage::PropertyMap& props,
                                               HttpClient* http) {
  std::unique_ptr<RestAuth> auth;
  std::string token = PropOr(props, "token");
  std::string credential = PropOr(props, "credential");
  if (!token.empty()) {
    auth = std::make_unique<BearerAuth>(token);
  } else if (!credential.empty()) {
    std::string id, secret = credential;
    if (auto colon = credential.find(':'); colon != std::string::npos) {
      id = credential.substr(0, colon);
      secret = credential.substr(colon + 1);
    }
    std::string token_uri = PropOr(props, "oauth2-server-uri", base_uri + "/v1/oauth/tokens");
    auth = std::make_unique<OAuth2Auth>(token_uri, id, secret, PropOr(props, "scope", "catalog"), http);
  }
  if (PropOr(props, "rest.sigv4-enabled") == "true") {
    SigV4Credentials creds{PropOr(props, "rest.access-key-id"), PropOr(props, "rest.secret-access-key"),
                           PropOr(props, "rest.session-token")};
    std::string source = "properties 'rest.access-key-id' / 'rest.secret-access-key'";
    if (creds.access_key_id.empty()) {
      creds = {EnvOr("AWS_ACCESS_KEY_ID"), EnvOr("AWS_SECRET_ACCESS_KEY"), EnvOr("AWS_SESSION_TOKEN")};
      source = "the environment (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)";
    }
    if (creds.access_key_id.empty() || creds.secret_access_key.empty()) {
      return Status::Invalid(
          "rest.sigv4-enabled=true but no AWS keys: set 'rest.access-key-id' and 'rest.secret-access-key' (and "
          "'rest.session-token' for temporary credentials) or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY");
    }
    std::string region = PropOr(props, "rest.signing-region", PropOr(props, "client.region"));
    if (region.empty()) region = EnvOr("AWS_REGION");
    if (region.empty()) region = EnvOr("AWS_DEFAULT_REGION");
    if (region.empty()) {
      return Status::Invalid("rest.sigv4-enabled=true but no signing region: set 'rest.signing-region' or AWS_REGION");
    }
    auth = std::make_unique<SigV4Auth>(std::move(auth), std::move(creds), source, region,
                                       PropOr(props, "rest.signing-name", "execute-api"));
    return auth;
  }
  if (!auth) auth = std::make_unique<NoAuth>();
  return auth;
}

}  // namespace thaw::catalog

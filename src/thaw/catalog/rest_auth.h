// Authentication for the REST catalog: a bearer token (`token`), OAuth2
// client credentials (`credential` = "client_id:client_secret" against
// `oauth2-server-uri`, refreshed before expiry and once after a 401), and AWS
// SigV4-signed requests (`rest.sigv4-enabled`). Descriptions name the
// property a credential came from, never its value.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "thaw/catalog/http_client.h"
#include "thaw/common/status.h"
#include "thaw/storage/property_map.h"

namespace thaw::catalog {

class RestAuth {
 public:
  virtual ~RestAuth() = default;
  // Adds credentials to a request about to be sent (before every attempt:
  // tokens are refreshed and signatures computed here).
  virtual Status Apply(HttpRequest& request) = 0;
  // After a 401: forget a cached token and fetch a new one. True when a new
  // credential is in place and the request is worth sending once more.
  virtual Result<bool> RefreshAfterUnauthorized() { return false; }
  // Which credential is used, for error messages ("the bearer token in
  // property 'token'"); never a secret.
  virtual std::string Describe() const = 0;
  // What the user should check when the server refuses it.
  virtual std::string Advice() const = 0;
};

// From the catalog properties; `base_uri` is the catalog's uri (no trailing
// '/'), used for the default token endpoint <uri>/v1/oauth/tokens. `http` must
// outlive the result.
Result<std::unique_ptr<RestAuth>> MakeRestAuth(const std::string& base_uri, const storage::PropertyMap& properties,
                                               HttpClient* http);

// --- OAuth2 token lifetime (pure, unit-tested) ---
// A token is refreshed ahead of its expiry, by a margin of a tenth of its
// lifetime capped at 60 s; tokens without expires_in are used until a 401.
struct TokenLifetime {
  std::chrono::steady_clock::time_point obtained;
  std::optional<std::chrono::seconds> expires_in;
  std::chrono::steady_clock::time_point RefreshAt() const;
  bool NeedsRefresh(std::chrono::steady_clock::time_point now) const;
};

// --- AWS Signature Version 4 (pure, unit-tested) ---
struct SigV4Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // optional
};

struct SigV4Signature {
  std::string canonical_request;
  std::string string_to_sign;
  std::string signature;      // hex
  std::string authorization;  // the Authorization header value
  std::string signed_headers;
};

// Signs `request` as of `amz_date` ("20150830T123600Z"). The request must
// already carry every header to sign, including Host and X-Amz-Date (and
// X-Amz-Security-Token with a session token); all its headers are signed.
// The canonical URI is the URL's path encoded once more, as for every service
// but S3; the query's pairs are decoded, re-encoded and sorted.
Result<SigV4Signature> SignSigV4(const HttpRequest& request, const SigV4Credentials& credentials,
                                 std::string_view amz_date, std::string_view region, std::string_view service);

std::string Sha256Hex(std::string_view data);

}  // namespace thaw::catalog

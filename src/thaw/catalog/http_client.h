// A small HTTP client over libcurl for the REST catalog: timeouts, a bounded
// response size, and bounded retries with exponential backoff and jitter.
// Requests carry credentials in headers; nothing here ever logs or returns a
// header value or a URL's query string in an error.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "thaw/common/status.h"

namespace thaw::catalog {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method = "GET";  // GET, POST, HEAD, DELETE
  std::string url;             // absolute, query included
  HttpHeaders headers;
  std::string body;
};

struct HttpResponse {
  long status = 0;
  HttpHeaders headers;  // names lower-cased
  std::string body;
  // The value of a response header (case-insensitive name), empty if absent.
  std::string Header(std::string_view name) const;
};

struct HttpOptions {
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds request_timeout{60'000};
  int64_t max_response_bytes = 256LL << 20;
  int max_attempts = 5;  // first try included
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{5'000};
  // Also retry 500, 502 and 504 (for services whose every request is
  // idempotent, such as a schema registry's reads, lookups and registrations).
  bool retry_server_errors = false;
  // PEM file of the CAs that verify the server's certificate (https); empty:
  // libcurl's default bundle.
  std::string ca_file;
};

// What happened to one exchange that produced no HTTP response.
enum class TransportFailure {
  kNone,
  kNotSent,  // DNS/connect/TLS failed: the server never saw the request (safe to retry any request)
  kLost,     // the request may have reached the server (reset, timeout, truncated response)
};

// When a request may be retried after a retryable failure.
enum class RetryPolicy {
  kIdempotent,  // GETs, HEADs and keyed (Idempotency-Key) writes: 429, 503 and any transport failure
  kNotSent,     // other writes: 429, 503 (server did not act) and failures before sending
};

class HttpClient {
 public:
  // Called before each attempt (auth headers, SigV4 signatures with the current time).
  using Prepare = std::function<Status(HttpRequest&)>;

  static Result<std::unique_ptr<HttpClient>> Make(HttpOptions options = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // One exchange, no retries. Any HTTP status is a successful Result; a
  // transport failure is an IOError and *failure says whether it was sent.
  Result<HttpResponse> SendOnce(const HttpRequest& request, TransportFailure* failure);

  // Sends with bounded retries (429, 503, transport failures per `policy`),
  // honouring Retry-After when the server sends one. Returns the last response
  // (any status) or, when no response came, an IOError naming the method, the
  // URL's path and the failure; *failure (optional) is set as in SendOnce.
  Result<HttpResponse> Send(HttpRequest request, RetryPolicy policy, const Prepare& prepare = nullptr,
                            TransportFailure* failure = nullptr);

  const HttpOptions& options() const { return options_; }
  int64_t retries() const { return retries_; }

 private:
  explicit HttpClient(HttpOptions options);
  HttpOptions options_;
  void* curl_ = nullptr;  // CURL*, reused for connection keep-alive
  std::mt19937_64 rng_;
  int64_t retries_ = 0;
};

// Backoff before retry number `attempt` (1 = the first retry): a uniformly
// random share ("full jitter") of min(max, initial * 2^(attempt-1)).
std::chrono::milliseconds BackoffDelay(int attempt, const HttpOptions& options, std::mt19937_64& rng);

bool IsRetryableStatus(long status);  // 429, 503

// A URL without its query string and userinfo ("http://h:1/v1/x?token=s" ->
// "http://h:1/v1/x"): what errors may show.
std::string RedactUrl(std::string_view url);

// RFC 3986 percent-encoding of everything but unreserved characters.
std::string PercentEncode(std::string_view text);
// application/x-www-form-urlencoded body from key/value pairs.
std::string FormEncode(const std::vector<std::pair<std::string, std::string>>& fields);

}  // namespace thaw::catalog

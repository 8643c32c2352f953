#include "thaw/catalog/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <thread>

#include "thaw/common/log.h"

namespace thaw::catalog {

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

struct Exchange {
  HttpResponse* response;
  int64_t limit;
  bool too_large = false;
};

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  size_t bytes = size * n;
  if (static_cast<int64_t>(ex->response->body.size() + bytes) > ex->limit) {
    ex->too_large = true;
    return 0;  // aborts the transfer
  }
  ex->response->body.append(data, bytes);
  return bytes;
}

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  size_t bytes = size * n;
  std::string_view line(data, bytes);
  if (line.starts_with("HTTP/")) {
    ex->response->headers.clear();  // a new response (100-continue, ...)
  } else if (auto colon = line.find(':'); colon != std::string_view::npos) {
    ex->response->headers.emplace_back(Lower(Trim(line.substr(0, colon))), Trim(line.substr(colon + 1)));
  }
  return bytes;
}

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

std::string HttpResponse::Header(std::string_view name) const {
  std::string key = Lower(name);
  for (const auto& [k, v] : headers) {
    if (k == key) return v;
  }
  return "";
}

Result<std::unique_ptr<HttpClient>> HttpClient::Make(HttpOptions options) {
  GlobalInit();
  std::unique_ptr<HttpClient> client(new HttpClient(options));
  client->curl_ = curl_easy_init();
  if (client->curl_ == nullptr) return Status::Internal("libcurl: curl_easy_init failed");
  return client;
}

HttpClient::HttpClient(HttpOptions options) : options_(options), rng_(std::random_device{}()) {}

HttpClient::~HttpClient() {
  if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

Result<HttpResponse> HttpClient::SendOnce(const HttpRequest& request, TransportFailure* failure) {
  *failure = TransportFailure::kNone;
  CURL* curl = static_cast<CURL*>(curl_);
  curl_easy_reset(curl);
  HttpResponse response;
  Exchange ex{&response, options_.max_response_bytes};
  curl_slist* headers = nullptr;
  for (const auto& [k, v] : request.headers) headers = curl_slist_append(headers, (k + ": " + v).c_str());
  // No "Expect: 100-continue" round trip for bodies.
  headers = curl_slist_append(headers, "Expect:");
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);  // never forward credentials elsewhere
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.request_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");  // gzip/deflate if the server offers
  if (!options_.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, options_.ca_file.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &ex);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &ex);
  if (request.method == "GET") {
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  } else if (request.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else {
    if (request.method != "POST") curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  }
  CURLcode rc = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  if (ex.too_large) {
    return Status::IOError("{} {}: the response is larger than {} bytes", request.method, RedactUrl(request.url),
                           options_.max_response_bytes);
  }
  if (rc != CURLE_OK) {
    long request_size = 0;
    curl_easy_getinfo(curl, CURLINFO_REQUEST_SIZE, &request_size);
    bool not_sent = request_size == 0 || rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_COULDNT_CONNECT ||
                    rc == CURLE_COULDNT_RESOLVE_PROXY;
    *failure = not_sent ? TransportFailure::kNotSent : TransportFailure::kLost;
    return Status::IOError("{} {}: {}{}", request.method, RedactUrl(request.url), curl_easy_strerror(rc),
                           not_sent ? " (request not sent)" : " (no complete response)");
  }
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  return response;
}

Result<HttpResponse> HttpClient::Send(HttpRequest request, RetryPolicy policy, const Prepare& prepare,
                                      TransportFailure* failure_out) {
  HttpHeaders base_headers = request.headers;
  for (int attempt = 1;; ++attempt) {
    request.headers = base_headers;
    if (prepare) RETURN_NOT_OK(prepare(request));
    TransportFailure failure = TransportFailure::kNone;
    auto result = SendOnce(request, &failure);
    if (failure_out != nullptr) *failure_out = failure;
    bool retryable;
    std::chrono::milliseconds delay = BackoffDelay(attempt, options_, rng_);
    if (result.ok()) {
      retryable =
          IsRetryableStatus(result->status) ||
          (options_.retry_server_errors && (result->status == 500 || result->status == 502 || result->status == 504));
      if (retryable) {
        std::string after = result->Header("retry-after");
        if (!after.empty() && std::all_of(after.begin(), after.end(), ::isdigit) && after.size() < 6) {
          delay = std::min<std::chrono::milliseconds>(std::chrono::seconds(std::stoi(after)), options_.max_backoff);
        }
      }
    } else {
      retryable = failure == TransportFailure::kNotSent ||
                  (failure == TransportFailure::kLost && policy == RetryPolicy::kIdempotent);
    }
    if (!retryable || attempt >= options_.max_attempts) {
      if (!result.ok() && attempt > 1) {
        return result.status().WithContext(fmt::format("after {} attempts", attempt));
      }
      return result;
    }
    ++retries_;
    log::Debug("{} {}: {}, retry {} of {} in {} ms", request.method, RedactUrl(request.url),
               result.ok() ? fmt::format("HTTP {}", result->status) : result.status().message(), attempt,
               options_.max_attempts - 1, delay.count());
    std::this_thread::sleep_for(delay);
  }
}

std::chrono::milliseconds BackoffDelay(int attempt, const HttpOptions& options, std::mt19937_64& rng) {
  int64_t cap = options.max_backoff.count();
  int64_t ceiling = options.initial_backoff.count();
  for (int i = 1; i < attempt && ceiling < cap; ++i) ceiling *= 2;
  ceiling = std::min(ceiling, cap);
  if (ceiling <= 0) return std::chrono::milliseconds(0);
  std::uniform_int_distribution<int64_t> dist(0, ceiling);
  return std::chrono::milliseconds(dist(rng));
}

bool IsRetryableStatus(long status) { return status == 429 || status == 503; }

std::string RedactUrl(std::string_view url) {
  std::string_view u = url.substr(0, url.find_first_of("?#"));
  auto scheme_end = u.find("://");
  if (scheme_end != std::string_view::npos) {
    auto authority_start = scheme_end + 3;
    auto path_start = u.find('/', authority_start);
    auto at = u.find('@', authority_start);
    if (at != std::string_view::npos && (path_start == std::string_view::npos || at < path_start)) {
      return std::string(u.substr(0, authority_start)) + std::string(u.substr(at + 1));
    }
  }
  return std::string(u);
}

std::string PercentEncode(std::string_view text) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string FormEncode(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out;
  for (const auto& [k, v] : fields) {
    if (!out.empty()) out.push_back('&');
    out += PercentEncode(k) + "=" + PercentEncode(v);
  }
  return out;
}

}  // namespace thaw::catalog

// The metrics listener of `--metrics HOST:PORT` (loopback unless a host is
// given): a small HTTP/1.1 server on asio, on a thread and io_context of its
// own, so a scrape never waits behind Kafka traffic.
//
//   GET /metrics   Prometheus text format (version 0.0.4)
//   GET /healthz   200 "ok" while the process runs
//   GET /readyz    200 when every readiness check passes, else 503 naming
//                  the ones that fail (catalog, upstream, tables)
//   GET /          the status page (status_page.h)
//
// Requests are bounded (8 KiB of request line and headers) before anything
// is allocated for them; each connection answers one request and closes.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "thaw/common/status.h"
#include "thaw/metrics/metrics.h"

namespace thaw::metrics {

struct EndpointOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0: any free port (tests)
  // How often the status page samples its charts.
  std::chrono::milliseconds sample_interval{10000};
};

// "HOST:PORT", ":PORT" or "PORT" (loopback). Errors name the option.
Result<EndpointOptions> ParseListen(const std::string& text);

class Endpoint {
 public:
  static Result<std::unique_ptr<Endpoint>> Start(std::shared_ptr<Metrics> metrics, EndpointOptions options);
  ~Endpoint();
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  uint16_t port() const;

  struct Impl;

 private:
  explicit Endpoint(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The answer to one request path (exposed for the unit test): status code,
// content type, body.
struct HttpAnswer {
  int status = 200;
  std::string content_type;
  std::string body;
};
class StatusHistory;
HttpAnswer Answer(Metrics& metrics, const StatusHistory& history, const std::string& method,
                  const std::string& target);

}  // namespace thaw::metrics

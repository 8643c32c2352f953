#include "thaw/metrics/endpoint.h"

#include <asio.hpp>
#include <charconv>
#include <string_view>
#include <thread>

#include "thaw/common/log.h"
#include "thaw/metrics/http_request.h"
#include "thaw/metrics/status_page.h"

namespace thaw::metrics {

namespace {

constexpr size_t kMaxRequestBytes = 8 * 1024;

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
  }
  return "Error";
}

std::string Response(const HttpAnswer& a, bool head) {
  std::string out = fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\n"
      "Connection: close\r\n\r\n",
      a.status, Reason(a.status), a.content_type, a.body.size());
  if (!head) out += a.body;
  return out;
}

}  // namespace

Result<EndpointOptions> ParseListen(const std::string& text) {
  EndpointOptions o;
  std::string_view port = text;
  if (auto colon = text.rfind(':'); colon != std::string::npos) {
    std::string host = text.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    if (!host.empty()) o.host = host;
    port = std::string_view(text).substr(colon + 1);
  }
  unsigned value = 0;
  auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || p != port.data() + port.size() || value > 65535) {
    return Status::Invalid("--metrics '{}': expected HOST:PORT or PORT (e.g. 127.0.0.1:9404; 0 picks a free port)",
                           text);
  }
  o.port = static_cast<uint16_t>(value);
  return o;
}

HttpAnswer Answer(Metrics& metrics, const StatusHistory& history, const std::string& method,
                  const std::string& target) {
  if (method != "GET" && method != "HEAD") return {405, "text/plain; charset=utf-8", "only GET and HEAD\n"};
  std::string path = target.substr(0, target.find('?'));
  if (path == "/metrics") return {200, "text/plain; version=0.0.4; charset=utf-8", metrics.Scrape()};
  if (path == "/healthz") return {200, "text/plain; charset=utf-8", "ok\n"};
  if (path == "/readyz") {
    std::string body;
    bool ready = true;
    for (const auto& [name, st] : metrics.Readiness()) {
      ready = ready && st.ok();
      body += st.ok() ? fmt::format("{}: ok\n", name) : fmt::format("{}: {}\n", name, st.message());
    }
    if (body.empty()) body = "ok\n";
    return {ready ? 200 : 503, "text/plain; charset=utf-8", body};
  }
  if (path == "/" || path == "/index.html") return {200, "text/html; charset=utf-8", history.Render(metrics)};
  return {404, "text/plain; charset=utf-8", "not found: try /, /metrics, /healthz or /readyz\n"};
}

struct Endpoint::Impl {
  std::shared_ptr<Metrics> metrics;
  EndpointOptions options;
  asio::io_context io{1};
  asio::ip::tcp::acceptor acceptor{io};
  asio::steady_timer sampler{io};
  StatusHistory history;
  std::thread thread;

  asio::awaitable<void> Accept() {
    for (;;) {
      asio::error_code ec;
      asio::ip::tcp::socket socket = co_await acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
      if (ec) {
        if (ec == asio::error::operation_aborted) co_return;
        continue;
      }
      asio::co_spawn(io, Serve(std::move(socket)), asio::detached);
    }
  }

  asio::awaitable<void> Serve(asio::ip::tcp::socket socket) {
    // A client has 10 s to send its request and read the answer.
    asio::steady_timer deadline(io);
    deadline.expires_after(std::chrono::seconds(10));
    deadline.async_wait([&socket](const asio::error_code& e) {
      if (e) return;
      asio::error_code ignored;
      socket.close(ignored);
    });
    std::string buffer;
    asio::error_code ec;
    size_t n = co_await asio::async_read_until(socket, asio::dynamic_buffer(buffer, kMaxRequestBytes), "\r\n\r\n",
                                               asio::redirect_error(asio::use_awaitable, ec));
    HttpAnswer answer;
    std::string method;
    if (ec == asio::error::not_found) {  // the bound was reached first
      answer = {431, "text/plain; charset=utf-8", "request line and headers are limited to 8 KiB\n"};
    } else if (ec) {
      co_return;
    } else {
      auto line = ParseRequestLine(std::string_view(buffer.data(), n));
      if (!line) {
        answer = {400, "text/plain; charset=utf-8", "expected: METHOD /TARGET HTTP/1.1\n"};
      } else {
        method = line->method;
        answer = Answer(*metrics, history, method, line->target);
      }
    }
    std::string out = Response(answer, method == "HEAD");
    co_await asio::async_write(socket, asio::buffer(out), asio::redirect_error(asio::use_awaitable, ec));
    socket.shutdown(asio::ip::tcp::socket::shutdown_send, ec);
    deadline.cancel();
  }

  asio::awaitable<void> Sample() {
    for (;;) {
      history.Sample(*metrics);
      sampler.expires_after(options.sample_interval);
      asio::error_code ec;
      co_await sampler.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return;
    }
  }
};

Result<std::unique_ptr<Endpoint>> Endpoint::Start(std::shared_ptr<Metrics> metrics, EndpointOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->metrics = std::move(metrics);
  impl->options = options;
  asio::error_code ec;
  auto address = asio::ip::make_address(options.host, ec);
  if (ec) {
    return Status::Invalid("--metrics: '{}' is not an IP address (use e.g. 127.0.0.1 or 0.0.0.0)", options.host);
  }
  asio::ip::tcp::endpoint ep(address, options.port);
  impl->acceptor.open(ep.protocol(), ec);
  if (!ec) impl->acceptor.set_option(asio::ip::tcp::acceptor::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(ep, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::IOError("--metrics {}:{}: cannot listen: {} (is another process on that port?)", options.host,
                           options.port, ec.message());
  }
  Impl* raw = impl.get();
  asio::co_spawn(raw->io, raw->Accept(), asio::detached);
  asio::co_spawn(raw->io, raw->Sample(), asio::detached);
  raw->thread = std::thread([raw] { raw->io.run(); });
  auto endpoint = std::unique_ptr<Endpoint>(new Endpoint(std::move(impl)));
  log::Info("metrics on http://{}:{}/metrics (status page at /, /healthz, /readyz)", options.host, endpoint->port());
  return endpoint;
}

Endpoint::Endpoint(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Endpoint::~Endpoint() {
  if (!impl_) return;
  asio::post(impl_->io, [impl = impl_.get()] {
    asio::error_code ec;
    impl->acceptor.close(ec);
    impl->sampler.cancel();
    impl->io.stop();
  });
  if (impl_->thread.joinable()) impl_->thread.join();
}

uint16_t Endpoint::port() const { return impl_->acceptor.local_endpoint().port(); }

}  // namespace thaw::metrics

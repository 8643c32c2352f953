#include "thaw/kafka/client/connection.h"

#include "thaw/common/secrets.h"
#include "thaw/kafka/ca_bundle.h"
#include "thaw/kafka/frame_io.h"
#include "thaw/kafka/protocol/response_frame.h"
#include "thaw/kafka/tls_context.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdlib>

namespace thaw::kafka::client {

namespace {

using asio::use_awaitable;

void PutBigEndian32(char* p, uint32_t v) {
  p[0] = static_cast<char>(v >> 24);
  p[1] = static_cast<char>(v >> 16);
  p[2] = static_cast<char>(v >> 8);
  p[3] = static_cast<char>(v);
}

}  // namespace

Status ApplyProperty(std::string_view name, std::string_view value, std::string_view origin,
                     ConnectionOptions* options) {
  auto number = [&](int64_t lo, int64_t hi) -> Result<int64_t> {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size() || v < lo || v > hi) {
      return Status::Invalid("{}: upstream property {}={}: give a whole number {}..{}", origin, name, value, lo, hi);
    }
    return v;
  };
  if (name == "socket.connection.setup.timeout.ms") {
    ASSIGN_OR_RAISE(int64_t ms, number(100, 3'600'000));
    options->connect_timeout = std::chrono::milliseconds(ms);
  } else if (name == "request.timeout.ms") {
    ASSIGN_OR_RAISE(int64_t ms, number(100, 3'600'000));
    options->request_timeout = std::chrono::milliseconds(ms);
  } else if (name == "receive.message.max.bytes") {
    ASSIGN_OR_RAISE(int64_t bytes, number(1 << 20, INT32_MAX));
    options->max_frame_bytes = static_cast<int32_t>(bytes);
  } else if (name == "client.id") {
    if (value.empty()) return Status::Invalid("{}: upstream property client.id is empty", origin);
    options->client_id = std::string(value);
  } else if (name == "security.protocol") {
    std::string upper(value);
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (upper != "PLAINTEXT" && upper != "SSL" && upper != "SASL_PLAINTEXT" && upper != "SASL_SSL") {
      return Status::Invalid("{}: security.protocol={}: give PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", origin,
                             value);
    }
    options->tls.enabled = upper == "SSL" || upper == "SASL_SSL";
    options->sasl.enabled = upper.rfind("SASL_", 0) == 0;
  } else if (name == "sasl.mechanism" || name == "sasl.mechanisms") {
    if (value != "PLAIN" && value != "SCRAM-SHA-256" && value != "SCRAM-SHA-512") {
      return Status::Invalid(
          "{}: {}={}: Thaw's own upstream connection speaks PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (clients' "
          "mechanisms, OAUTHBEARER included, pass through on their own connections)",
          origin, name, value);
    }
    options->sasl.mechanism = std::string(value);
  } else if (name == "sasl.username") {
    options->sasl.username = std::string(value);
  } else if (name == "sasl.password") {
    ASSIGN_OR_RAISE(options->sasl.password, ResolveSecretReference(name, value, origin));
  } else if (name == "ssl.ca.location") {
    options->tls.ca_file = std::string(value);
  } else if (name == "ssl.certificate.location") {
    options->tls.cert_file = std::string(value);
  } else if (name == "ssl.key.location") {
    options->tls.key_file = std::string(value);
  } else if (name == "ssl.endpoint.identification.algorithm") {
    if (value != "https" && value != "none" && !value.empty()) {
      return Status::Invalid("{}: ssl.endpoint.identification.algorithm={}: give https or none", origin, value);
    }
    options->tls.verify_hostname = value == "https";
  } else {
    return Status::Invalid(
        "{}: '{}' is not an upstream property Thaw's connection honours (it takes "
        "socket.connection.setup.timeout.ms, request.timeout.ms, receive.message.max.bytes, client.id, "
        "security.protocol, ssl.ca.location, ssl.certificate.location, ssl.key.location, "
        "ssl.endpoint.identification.algorithm, sasl.mechanism, sasl.username, sasl.password; docs/serve.md)",
        origin, name);
  }
  return Status::OK();
}

Status PrepareTls(ConnectionOptions* options) {
  const auto& sasl = options->sasl;
  if (sasl.enabled && sasl.mechanism == "GSSAPI") {
    return Status::Invalid(
        "security.protocol=SASL_*: set -X sasl.mechanism=PLAIN|SCRAM-SHA-256|SCRAM-SHA-512 (Thaw's own connection "
        "does not speak GSSAPI)");
  }
  if (sasl.enabled && (sasl.username.empty() || sasl.password.empty())) {
    return Status::Invalid("security.protocol=SASL_*: set -X sasl.username and -X sasl.password (e.g. "
                           "sasl.password=@/etc/thaw/kafka.password) for Thaw's own connection to the upstream");
  }
  if (!sasl.enabled && (!sasl.username.empty() || !sasl.password.empty())) {
    return Status::Invalid("sasl.* upstream properties are set but security.protocol is not SASL_PLAINTEXT or "
                           "SASL_SSL");
  }
  auto& t = options->tls;
  if (!t.enabled) {
    if (!t.ca_file.empty() || !t.cert_file.empty() || !t.key_file.empty()) {
      return Status::Invalid("ssl.* upstream properties are set but security.protocol is not SSL or SASL_SSL");
    }
    return Status::OK();
  }
  auto ctx = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_client);
  asio::error_code ec;
  ctx->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                       asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1,
                   ec);
  // Without ssl.ca.location: the system's CA bundle, as a file (ca_bundle.h).
  std::string ca = t.ca_file.empty() ? SystemCaFile() : t.ca_file;
  ctx->load_verify_file(ca, ec);
  if (ec) {
    return Status::Invalid("ssl.ca.location {}: not a readable PEM CA file: {}",
                           t.ca_file.empty() ? ca + " (the system's; give ssl.ca.location)" : ca, TlsReason(ec));
  }
  if (t.cert_file.empty() != t.key_file.empty()) {
    return Status::Invalid("mutual TLS towards the upstream needs both ssl.certificate.location and ssl.key.location");
  }
  if (!t.cert_file.empty()) {
    ctx->use_certificate_chain_file(t.cert_file, ec);
    if (ec) return Status::Invalid("ssl.certificate.location {}: {}", t.cert_file, TlsReason(ec));
    ctx->use_private_key_file(t.key_file, asio::ssl::context::pem, ec);
    if (ec) return Status::Invalid("ssl.key.location {}: {}", t.key_file, TlsReason(ec));
  }
  ctx->set_verify_mode(asio::ssl::verify_peer, ec);
  if (ec) return Status::IOError("TLS: cannot verify the upstream's certificate: {}", TlsReason(ec));
  t.context = std::move(ctx);
  return Status::OK();
}

Status CheckReachable(const std::string& host, uint16_t port, std::chrono::milliseconds timeout) {
  asio::io_context io(1);
  asio::ip::tcp::resolver resolver(io);
  asio::ip::tcp::socket socket(io);
  asio::steady_timer timer(io);
  asio::error_code result = asio::error::timed_out;
  resolver.async_resolve(host, std::to_string(port), [&](const asio::error_code& ec, auto endpoints) {
    if (ec) {
      result = ec;
      timer.cancel();
      return;
    }
    asio::async_connect(socket, endpoints, [&](const asio::error_code& cec, const auto&) {
      result = cec;
      timer.cancel();
    });
  });
  timer.expires_after(timeout);
  timer.async_wait([&](const asio::error_code& ec) {
    if (ec) return;  // cancelled: the connect finished first
    asio::error_code ignored;
    resolver.cancel();
    socket.close(ignored);
  });
  io.run();
  if (result) return Status::IOError("{}:{}: {}", host, port, result.message());
  return Status::OK();
}

Result<std::pair<std::string, uint16_t>> ParseAddress(std::string_view address, std::string_view what) {
  const size_t colon = address.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == address.size()) {
    return Status::Invalid("{} '{}' must be HOST:PORT, e.g. 127.0.0.1:9092", what, address);
  }
  std::string host(address.substr(0, colon));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string_view digits = address.substr(colon + 1);
  int port = -1;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (ec != std::errc() || end != digits.data() + digits.size() || port < 0 || port > 65535) {
    return Status::Invalid("{} '{}': the port must be 0..65535", what, address);
  }
  if (host.empty()) host = "127.0.0.1";
  return std::make_pair(host, static_cast<uint16_t>(port));
}

int32_t FrameSize(const uint8_t* p) {
  return static_cast<int32_t>((uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3]);
}

bool PeekRequest(std::string_view frame, RequestPeek* out) {
  if (frame.size() < 8) return false;
  const auto* p = reinterpret_cast<const uint8_t*>(frame.data());
  out->api_key = static_cast<int16_t>((p[0] << 8) | p[1]);
  out->api_version = static_cast<int16_t>((p[2] << 8) | p[3]);
  out->correlation_id = FrameSize(p + 4);
  return true;
}

bool PeekCorrelationId(std::string_view frame, int32_t* out) {
  if (frame.size() < 4) return false;
  *out = FrameSize(reinterpret_cast<const uint8_t*>(frame.data()));
  return true;
}

std::string EncodeRequestFrame(const msg::RequestHeader& header, int16_t header_version, std::string_view body) {
  WireWriter w;
  w.WriteInt32(0);  // size, patched below
  header.Write(w, header_version);
  std::string out = std::move(w).Take();
  out.append(body);
  PutBigEndian32(out.data(), static_cast<uint32_t>(out.size() - 4));
  return out;
}

std::string EncodeResponseFrame(int32_t correlation_id, int16_t header_version, std::string_view body) {
  std::string out = EncodeResponseHead(correlation_id, header_version, body.size());
  out.append(body);
  return out;
}

asio::awaitable<Result<std::unique_ptr<Connection>>> Connection::Open(asio::any_io_executor executor,
                                                                      std::string host, uint16_t port,
                                                                      ConnectionOptions options) {
  const std::string address = fmt::format("{}:{}", host, port);
  asio::ip::tcp::resolver resolver(executor);
  asio::error_code ec;
  auto endpoints =
      co_await resolver.async_resolve(host, std::to_string(port), asio::redirect_error(use_awaitable, ec));
  if (ec) co_return Status::IOError("cannot resolve {}: {}", address, ec.message());
  asio::ip::tcp::socket socket(executor);
  // The connect races a timer: whichever ends first cancels the other. A
  // timer that expired in the same turn as the connect completed still runs
  // its handler, maybe after this frame is gone: the handler owns its state
  // and touches the socket only while the connect is pending.
  struct Race {
    bool connected = false;
    bool timed_out = false;
  };
  auto race = std::make_shared<Race>();
  asio::steady_timer timer(executor);
  timer.expires_after(options.connect_timeout);
  timer.async_wait([race, &socket](const asio::error_code& e) {
    if (e || race->connected) return;
    race->timed_out = true;
    asio::error_code ignored;
    socket.cancel(ignored);
  });
  co_await asio::async_connect(socket, endpoints, asio::redirect_error(use_awaitable, ec));
  race->connected = true;
  timer.cancel();
  if (race->timed_out) co_return Status::IOError("cannot connect to {}: no answer within {} ms", address,
                                                 options.connect_timeout.count());
  if (ec) co_return Status::IOError("cannot connect to {}: {}", address, ec.message());
  socket.set_option(asio::ip::tcp::no_delay(true), ec);
  if (!options.tls.context) {
    co_return std::unique_ptr<Connection>(new Connection(Stream(std::move(socket)), address, std::move(options)));
  }
  // TLS: the handshake within the same connect timeout (a listener that
  // accepts and never answers must not hold the pair forever).
  Stream stream(std::move(socket), options.tls.context);
  auto done = std::make_shared<bool>(false);
  auto handshake_timed_out = std::make_shared<bool>(false);
  asio::steady_timer hs_timer(executor);
  hs_timer.expires_after(options.connect_timeout);
  hs_timer.async_wait([done, handshake_timed_out, &stream](const asio::error_code& e) {
    if (e || *done) return;
    *handshake_timed_out = true;
    asio::error_code ignored;
    stream.socket().cancel(ignored);
  });
  ec = co_await stream.ClientHandshake(host, options.tls.verify_hostname);
  *done = true;
  hs_timer.cancel();
  if (*handshake_timed_out) {
    co_return Status::IOError("{}: no TLS handshake within {} ms", address, options.connect_timeout.count());
  }
  if (ec) co_return Status::IOError("{}: TLS handshake failed: {}", address, TlsReason(ec));
  co_return std::unique_ptr<Connection>(new Connection(std::move(stream), address, std::move(options)));
}

asio::awaitable<Status> Connection::WriteFrame(std::string_view frame) {
  asio::error_code ec;
  co_await asio::async_write(stream_, asio::buffer(frame.data(), frame.size()),
                             asio::redirect_error(use_awaitable, ec));
  if (ec) co_return Status::IOError("{}: write failed: {}", address_, ec.message());
  co_return Status::OK();
}

asio::awaitable<Status> Connection::ReadFrame(std::string* frame) {
  uint8_t prefix[4];
  asio::error_code ec;
  co_await asio::async_read(stream_, asio::buffer(prefix, 4), asio::redirect_error(use_awaitable, ec));
  if (ec) {
    co_return Status::IOError("{}: {}", address_,
                              ec == asio::error::eof ? std::string("the broker closed the connection") : ec.message());
  }
  const int32_t size = FrameSize(prefix);
  if (size < 4 || size > options_.max_frame_bytes) {
    co_return Status::IOError("{}: response frame of {} bytes is outside the accepted 4..{}", address_, size,
                              options_.max_frame_bytes);
  }
  frame->clear();
  ec = co_await ReadGrowing(stream_, frame, 0, static_cast<size_t>(size));
  if (ec) co_return Status::IOError("{}: connection lost inside a {}-byte response: {}", address_, size, ec.message());
  co_return Status::OK();
}

void Connection::Close() { stream_.Close(); }

}  // namespace thaw::kafka::client

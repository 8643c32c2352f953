// A Kafka connection's byte stream: a TCP socket, or TLS over one (OpenSSL
// through asio's SSL stream). The server's connections (kafka/server) and
// the tiered proxy's client side (merged/) read and write through it, so a
// listener's TLS is decided in one place: where the connection is accepted.
//
//   Stream s(std::move(socket));                    // plaintext
//   Stream s(std::move(socket), tls->Current());    // TLS; then:
//   auto ec = co_await s.Handshake();               // server side
//   co_await asio::async_read(s, buffers, token);   // any asio composed op
//
// It models asio's AsyncReadStream / AsyncWriteStream.
#pragma once

#include <asio.hpp>
#include <asio/ssl.hpp>
#include <string>
#include <memory>
#include <optional>

namespace thaw::kafka {

class Stream {
 public:
  using executor_type = asio::any_io_executor;
  using Tls = asio::ssl::stream<asio::ip::tcp::socket>;

  explicit Stream(asio::ip::tcp::socket socket) : plain_(std::move(socket)) {}
  // TLS with `context` (kept alive by the stream: a renewed certificate
  // makes a new context for later connections only).
  Stream(asio::ip::tcp::socket socket, std::shared_ptr<asio::ssl::context> context)
      : context_(std::move(context)), tls_(std::in_place, std::move(socket), *context_) {}

  bool tls() const { return tls_.has_value(); }
  executor_type get_executor() { return socket().get_executor(); }
  asio::ip::tcp::socket& socket() { return tls_ ? tls_->next_layer() : *plain_; }

  // The server side of the TLS handshake (a no-op for plaintext).
  asio::awaitable<asio::error_code> Handshake() {
    asio::error_code ec;
    if (tls_) co_await tls_->async_handshake(Tls::server, asio::redirect_error(asio::use_awaitable, ec));
    co_return ec;
  }

  // The client side: SNI `host`, and (verify_host) the certificate must
  // name `host` (Kafka's ssl.endpoint.identification.algorithm=https).
  asio::awaitable<asio::error_code> ClientHandshake(const std::string& host, bool verify_host) {
    asio::error_code ec;
    if (!tls_) co_return ec;
    SSL_set_tlsext_host_name(tls_->native_handle(), host.c_str());
    if (verify_host) tls_->set_verify_callback(asio::ssl::host_name_verification(host), ec);
    if (!ec) co_await tls_->async_handshake(Tls::client, asio::redirect_error(asio::use_awaitable, ec));
    co_return ec;
  }

  template <typename MutableBuffers, typename Token>
  auto async_read_some(const MutableBuffers& buffers, Token&& token) {
    return asio::async_initiate<Token, void(asio::error_code, std::size_t)>(
        [this](auto handler, const MutableBuffers& b) {
          if (tls_) {
            tls_->async_read_some(b, std::move(handler));
          } else {
            plain_->async_read_some(b, std::move(handler));
          }
        },
        token, buffers);
  }

  template <typename ConstBuffers, typename Token>
  auto async_write_some(const ConstBuffers& buffers, Token&& token) {
    return asio::async_initiate<Token, void(asio::error_code, std::size_t)>(
        [this](auto handler, const ConstBuffers& b) {
          if (tls_) {
            tls_->async_write_some(b, std::move(handler));
          } else {
            plain_->async_write_some(b, std::move(handler));
          }
        },
        token, buffers);
  }

  // Closes the socket (no TLS close_notify: a closing Kafka connection is
  // not waited on, as a broker does not).
  void Close() {
    asio::error_code ignored;
    socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    socket().close(ignored);
  }

 private:
  std::optional<asio::ip::tcp::socket> plain_;
  std::shared_ptr<asio::ssl::context> context_;
  std::optional<Tls> tls_;
};

}  // namespace thaw::kafka

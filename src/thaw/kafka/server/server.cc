#include "thaw/kafka/server/server.h"

#include "thaw/common/log.h"
#include "thaw/kafka/server/connection.h"

namespace thaw::kafka::server {

Server::Server(asio::io_context& io, Broker& broker, ServerOptions options)
    : io_(io), broker_(broker), options_(std::move(options)), acceptor_(io) {}

Server::~Server() = default;

Result<std::unique_ptr<Server>> Server::Make(asio::io_context& io, Broker& broker, ServerOptions options) {
  std::unique_ptr<Server> s(new Server(io, broker, options));
  asio::error_code ec;
  auto address = asio::ip::make_address(options.listen_host, ec);
  if (ec) {
    // A host name: resolve it (e.g. localhost).
    asio::ip::tcp::resolver resolver(io);
    auto results = resolver.resolve(options.listen_host, std::to_string(options.listen_port), ec);
    if (ec || results.empty()) {
      return Status::Invalid("--listen {}:{}: cannot resolve the host: {}", options.listen_host, options.listen_port,
                             ec ? ec.message() : "no address");
    }
    address = results.begin()->endpoint().address();
  }
  asio::ip::tcp::endpoint endpoint(address, options.listen_port);
  s->acceptor_.open(endpoint.protocol(), ec);
  if (!ec) s->acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true), ec);
  if (!ec) s->acceptor_.bind(endpoint, ec);
  if (!ec) s->acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::IOError("cannot listen on {}:{}: {} (is another server using the port? choose one with --listen)",
                           options.listen_host, options.listen_port, ec.message());
  }
  s->port_ = s->acceptor_.local_endpoint().port();
  return s;
}

void Server::Start() { asio::co_spawn(io_, Accept(), asio::detached); }

asio::awaitable<void> Server::Accept() {
  for (;;) {
    asio::error_code ec;
    asio::ip::tcp::socket socket = co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (ec == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
      log::Warn("accepting a connection failed: {}", ec.message());
      continue;
    }
    socket.set_option(asio::ip::tcp::no_delay(true), ec);
    auto conn = std::make_shared<ConnectionState>(options_.tls ? Stream(std::move(socket), options_.tls->Current())
                                                               : Stream(std::move(socket)));
    if (options_.sasl_users) conn->sasl = std::make_unique<SaslSession>(options_.sasl_users);
    auto remote = conn->stream.socket().remote_endpoint(ec);
    conn->peer = ec ? "?" : fmt::format("{}:{}", remote.address().to_string(), remote.port());
    // Forget connections that have ended.
    connections_.remove_if([](const std::shared_ptr<ConnectionState>& c) { return c->closed; });
    connections_.push_back(conn);
    asio::co_spawn(io_, ServeConnection(broker_, conn, options_), asio::detached);
  }
}

void Server::Stop() {
  asio::error_code ec;
  acceptor_.close(ec);
  for (auto& c : connections_) {
    // Idle connections (waiting for a request) close now; busy ones close
    // after writing their response (the connection loop checks stopping).
    if (!c->busy && !c->closed) c->stream.socket().close(ec);
  }
}

size_t Server::open_connections() const {
  size_t n = 0;
  for (const auto& c : connections_) n += !c->closed;
  return n;
}

void Server::CloseAll() {
  asio::error_code ec;
  for (auto& c : connections_) {
    if (!c->closed) c->stream.socket().close(ec);
  }
}

}  // namespace thaw::kafka::server

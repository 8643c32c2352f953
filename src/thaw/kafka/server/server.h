// The Kafka listener of `thaw serve`: accepts connections on asio (C++20
// coroutines) and runs one coroutine per client connection (connection.cc).
//
//   Server::Make(io, broker, options)   binds (loopback unless configured)
//   server->Start()                     accepts until Stop()
//   server->Stop()                      stops accepting; idle connections
//                                       close now, busy ones after their
//                                       in-flight response
#pragma once

#include <asio.hpp>
#include <chrono>
#include <cstdint>
#include <list>
#include <memory>
#include <string>

#include "thaw/common/status.h"
#include "thaw/kafka/server/acl.h"
#include "thaw/kafka/server/sasl.h"
#include "thaw/kafka/tls_context.h"
#include "thaw/kafka/server/broker.h"

namespace thaw::kafka::server {

struct ServerOptions {
  std::string listen_host = "127.0.0.1";
  uint16_t listen_port = 9092;  // 0 = any free port (tests)
  // Largest request frame accepted (Kafka's socket.request.max.bytes); a
  // larger size prefix closes the connection before anything is allocated.
  int32_t max_frame_bytes = 100 << 20;
  // TLS on the listener (--tls-cert/--tls-key); null: plaintext.
  std::shared_ptr<TlsServerContext> tls;
  // SASL (--sasl-users): clients must authenticate (PLAIN, SCRAM) before
  // anything but ApiVersions; null: no SASL.
  std::shared_ptr<const SaslUsers> sasl_users;
  // ACLs (--acl-file): what each principal may read and describe; null:
  // everything is allowed.
  std::shared_ptr<const Authorizer> acl;
};

struct ConnectionState;

class Server {
 public:
  static Result<std::unique_ptr<Server>> Make(asio::io_context& io, Broker& broker, ServerOptions options);
  ~Server();
  uint16_t port() const { return port_; }
  void Start();
  void Stop();
  // Connections not yet closed.
  size_t open_connections() const;
  // Closes every connection now, busy or not (after Stop, when in-flight
  // requests took too long).
  void CloseAll();

 private:
  Server(asio::io_context& io, Broker& broker, ServerOptions options);
  asio::awaitable<void> Accept();

  asio::io_context& io_;
  Broker& broker_;
  ServerOptions options_;
  asio::ip::tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  std::list<std::shared_ptr<ConnectionState>> connections_;
};

}  // namespace thaw::kafka::server

// One client connection: reads size-prefixed request frames, decodes the
// request header (generated codec), dispatches to the API's handler and
// writes the responses in request order. Requests are handled one at a time,
// as a Kafka broker does per connection, so pipelined requests are answered
// in the order sent.
//
// Bad input closes only this connection, with one log line naming the
// client's address and client id: a frame size outside (0, max_frame_bytes],
// a header or body that does not decode, an API key Thaw does not serve or a
// version outside the range it advertised (Kafka closes the connection too).
// ApiVersions at an unsupported version gets KIP-511's answer instead:
// UNSUPPORTED_VERSION in the v0 format, with the supported ranges.
#pragma once

#include <asio.hpp>
#include <memory>

#include "thaw/kafka/server/broker.h"
#include "thaw/kafka/stream.h"
#include "thaw/kafka/server/server.h"

namespace thaw::kafka::server {

struct ConnectionState {
  Stream stream;  // plaintext or TLS (its handshake is ServeConnection's first step)
  std::string peer;
  bool busy = false;  // handling a request: finish it before closing
  bool closed = false;
  std::unique_ptr<SaslSession> sasl;  // with --sasl-users
  explicit ConnectionState(Stream s) : stream(std::move(s)) {}
};

asio::awaitable<void> ServeConnection(Broker& broker, std::shared_ptr<ConnectionState> conn,
                                      const ServerOptions& options);

}  // namespace thaw::kafka::server

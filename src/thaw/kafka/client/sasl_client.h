// SASL on a Kafka connection of Thaw's own (KIP-43 SaslHandshake v1, then
// KIP-152 SaslAuthenticate): PLAIN, or SCRAM-SHA-256/512 (RFC 5802 as Kafka
// speaks it, KIP-84), with ConnectionOptions::sasl. Used by the tiered
// proxy's own Metadata connection; a client's connection is never
// authenticated by Thaw (its SASL frames pass through).
#pragma once

#include <asio.hpp>
#include <string>
#include <string_view>

#include "thaw/common/status.h"
#include "thaw/kafka/client/connection.h"

namespace thaw::kafka::client {

// Authenticates `conn`; the error says which step failed and what the
// broker said (never the password). On error the connection is unusable.
asio::awaitable<Status> Authenticate(Connection& conn, const ConnectionOptions::Sasl& sasl);

// The SCRAM client's messages, apart for the unit test: client-first (with
// `nonce`), then, given the server-first, client-final and the server
// signature the server-final must carry.
struct ScramClient {
  std::string mechanism, username, password, nonce;
  std::string client_first_bare;
  std::string expected_server_signature;  // after Final()
  std::string First();
  Result<std::string> Final(std::string_view server_first);
  Status Verify(std::string_view server_final) const;
};

}  // namespace thaw::kafka::client

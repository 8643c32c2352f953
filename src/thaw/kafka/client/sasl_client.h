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

}  // namespace thaw::kafka::client

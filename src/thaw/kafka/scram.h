// SCRAM (RFC 5802, RFC 7677) as Kafka speaks it (KIP-84): the primitives the
// server's SASL (kafka/server/sasl.h) and Thaw's own client connections
// (kafka/client/sasl_client.h) share. OpenSSL's libcrypto underneath.
#pragma once

#include <openssl/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "thaw/common/status.h"

namespace thaw::kafka::scram {

// "SCRAM-SHA-256" / "SCRAM-SHA-512"; null for anything else.
const EVP_MD* Digest(std::string_view mechanism);
std::string Hmac(const EVP_MD* md, std::string_view key, std::string_view data);
std::string Hash(const EVP_MD* md, std::string_view data);
// Hi(password, salt, iterations): PBKDF2 with the mechanism's HMAC.
std::string SaltedPassword(const EVP_MD* md, std::string_view password, std::string_view salt, int32_t iterations);
std::string Base64(std::string_view raw);
std::optional<std::string> Unbase64(std::string_view b64);
// Constant-time comparison.
bool Equal(std::string_view a, std::string_view b);
// RFC 5802 saslname: "=2C" is ',' and "=3D" is '='; nullopt for another '=' escape.
std::optional<std::string> SaslName(std::string_view s);
// "k=v" attributes of a SCRAM message, in order.
std::vector<std::pair<char, std::string>> Attributes(std::string_view msg);
// The value of attribute `key` ("" when absent).
std::string Find(const std::vector<std::pair<char, std::string>>& attrs, char key);


// A SCRAM client's side of the exchange (kafka/client/sasl_client.h sends it): client-first (with
// `nonce`), then, given the server-first, client-final and the server
// signature the server-final must carry.
struct Client {
  std::string mechanism, username, password, nonce;
  std::string client_first_bare;
  std::string expected_server_signature;  // after Final()
  std::string First();
  Result<std::string> Final(std::string_view server_first);
  Status Verify(std::string_view server_final) const;
};

}  // namespace thaw::kafka::scram

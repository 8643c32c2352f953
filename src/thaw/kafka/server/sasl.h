// SASL on `thaw serve`'s listener (KIP-43 SaslHandshake v1 + KIP-152
// SaslAuthenticate): PLAIN and SCRAM-SHA-256/512 (RFC 5802, RFC 7677, as
// Kafka speaks them, KIP-84), against users kept as Kafka keeps them: salted
// SCRAM credentials (salt, StoredKey, ServerKey, iterations), never a
// password.
//
//   --sasl-users FILE   one line per user and mechanism:
//     alice SCRAM-SHA-256 iterations=8192 salt=B64 stored_key=B64 server_key=B64
//   `thaw serve --sasl-users FILE --add-user alice` writes alice's lines (the
//   password read from stdin).
//
// PLAIN is checked against the user's SCRAM credential (the password salted
// and hashed the same way). A connection authenticates once (or again, KIP-368:
// a new SaslHandshake starts over); until then it may send only ApiVersions,
// SaslHandshake and SaslAuthenticate.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "thaw/common/status.h"

namespace thaw::kafka::server {

struct ScramCredential {
  std::string salt, stored_key, server_key;  // raw bytes
  int32_t iterations = 0;
};

// "SCRAM-SHA-256" or "SCRAM-SHA-512".
Result<ScramCredential> MakeScramCredential(std::string_view mechanism, std::string_view password,
                                            int32_t iterations = 8192);

class SaslUsers {
 public:
  // Reads the users file; errors name the file and line.
  static Result<std::shared_ptr<SaslUsers>> Load(const std::string& path);
  // Adds or replaces `user`'s SCRAM-SHA-256 and SCRAM-SHA-512 lines in the
  // file (created if missing, mode 0600), written to a temporary file and
  // renamed over it.
  static Status AddUser(const std::string& path, const std::string& user, std::string_view password);

  const ScramCredential* Find(const std::string& user, const std::string& mechanism) const;
  size_t size() const { return creds_.size(); }

 private:
  std::map<std::pair<std::string, std::string>, ScramCredential> creds_;  // (user, mechanism)
};

// The mechanisms a listener with users offers, in Kafka's spelling.
const std::vector<std::string>& SaslMechanisms();

// One connection's authentication.
class SaslSession {
 public:
  explicit SaslSession(std::shared_ptr<const SaslUsers> users) : users_(std::move(users)) {}

  // SaslHandshake: false when `mechanism` is not offered.
  bool Start(const std::string& mechanism);
  bool started() const { return !mechanism_.empty(); }
  // One SaslAuthenticate token: the server's answer (empty for PLAIN), or
  // an error (authentication failed: the caller answers
  // SASL_AUTHENTICATION_FAILED and closes the connection). *done is set when
  // the exchange completed successfully.
  Result<std::string> Step(std::string_view client, bool* done);

  bool authenticated() const { return !principal_.empty(); }
  const std::string& principal() const { return principal_; }  // "User:alice"
  const std::string& user_tried() const { return user_; }      // for the log, never a secret

 private:
  std::shared_ptr<const SaslUsers> users_;
  std::string mechanism_;
  int step_ = 0;
  std::string user_, client_first_bare_, server_first_, nonce_;
  const ScramCredential* cred_ = nullptr;
  std::string principal_;
};

}  // namespace thaw::kafka::server

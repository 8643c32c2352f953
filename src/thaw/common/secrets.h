// Which settings hold secrets, and references that keep a secret's value out
// of the command line and config files (so out of the process list and
// shell history):
//
//   -X sasl.password=@/run/secrets/kafka        the file's content
//   -X sasl.password=${env:KAFKA_PASSWORD}      an environment variable (Kafka's
//                                               EnvVarConfigProvider syntax)
//
// Only a secret key's value is read as a reference; a value that is no
// reference is the secret itself. Secrets' values never appear in logs,
// errors or --json output: callers mask IsSecretKey keys.
#pragma once

#include <string>
#include <string_view>

#include "thaw/common/status.h"

namespace thaw {

// True for keys whose values are secrets: passwords, secret keys, session
// tokens, OAuth2 credentials and tokens, SAS tokens, account keys, SASL
// settings, private keys.
bool IsSecretKey(std::string_view key);

// The value `value` of setting `key` stands for: a reference resolved (a
// file's content without its trailing newline, an environment variable), or
// the value itself. `origin` ("-X", "-F FILE") starts an error, which never
// shows the secret.
Result<std::string> ResolveSecretReference(std::string_view key, std::string_view value, std::string_view origin);

}  // namespace thaw

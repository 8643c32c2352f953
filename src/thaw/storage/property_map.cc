#include "thaw/storage/property_map.h"

#include <array>

namespace thaw::storage {

bool IsSecretProperty(std::string_view key) {
  // connection-string: ADLS connection strings carry the account key;
  // shared-key: Iceberg Java's adls.auth.shared-key.account.key.
  static constexpr std::array<std::string_view, 15> kMarkers = {
      "secret", "token",       "password",          "credential",  "session",
      "sas",    "account-key", "account_key",       "private-key", "client-secret",
      "sasl.",  "apikey",      "connection-string", "shared-key",  "sse.key"};
  std::string lower(key);
  for (auto& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  for (auto m : kMarkers) {
    if (lower.find(m) != std::string::npos) return true;
  }
  return false;
}

}  // namespace thaw::storage

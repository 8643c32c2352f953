#include "thaw/storage/property_map.h"

#include <array>

namespace thaw::storage {

bool IsSecretProperty(std::string_view key) {
  static constexpr std::array<std::string_view, 12> kMarkers = {
      "secret",      "token",       "password",    "credential",    "session", "sas",
      "account-key", "account_key", "private-key", "client-secret", "sasl.",   "apikey"};
  std::string lower(key);
  for (auto& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  for (auto m : kMarkers) {
    if (lower.find(m) != std::string::npos) return true;
  }
  return false;
}

}  // namespace thaw::storage

#include "thaw/common/secrets.h"

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace thaw {

bool IsSecretKey(std::string_view key) {
  // connection-string: ADLS connection strings carry the account key;
  // shared-key: Iceberg Java's adls.auth.shared-key.account.key; ssl.key:
  // Kafka's ssl.key.password (and the key's location, harmlessly);
  // user.info: a schema registry's basic.auth.user.info (USER:PASSWORD).
  static constexpr std::array<std::string_view, 17> kMarkers = {
      "secret",  "token",       "password",          "credential",  "session",
      "sas",     "account-key", "account_key",       "private-key", "client-secret",
      "sasl.",   "apikey",      "connection-string", "shared-key",  "sse.key",
      "ssl.key", "user.info"};
  std::string lower(key);
  for (auto& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  for (auto m : kMarkers) {
    if (lower.find(m) != std::string::npos) return true;
  }
  return false;
}

Result<std::string> ResolveSecretReference(std::string_view key, std::string_view value, std::string_view origin) {
  if (!IsSecretKey(key)) return std::string(value);
  if (value.size() > 1 && value.front() == '@') {
    const std::string path(value.substr(1));
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      return Status::Invalid("{}: {}=@{}: cannot read the file ({})", origin, key, path, std::strerror(errno));
    }
    std::ostringstream text;
    text << in.rdbuf();
    std::string s = text.str();
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    if (s.empty()) return Status::Invalid("{}: {}=@{}: the file is empty", origin, key, path);
    return s;
  }
  if (value.size() > 7 && value.substr(0, 6) == "${env:" && value.back() == '}') {
    const std::string name(value.substr(6, value.size() - 7));
    const char* v = std::getenv(name.c_str());
    if (v == nullptr || *v == '\0') {
      return Status::Invalid("{}: {}=${{env:{}}}: the environment variable {} is not set", origin, key, name, name);
    }
    return std::string(v);
  }
  return std::string(value);
}

}  // namespace thaw

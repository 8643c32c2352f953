// The system's CA bundle, as a file: $SSL_CERT_FILE, else Debian's
// /etc/ssl/certs/ca-certificates.crt. Thaw always loads CAs from a file and
// never through OpenSSL's default verify paths: in this process, where the
// Arrow wheel's OpenSSL is loaded beside the system's, that store loader
// crashes (asio's set_default_verify_paths; librdkafka's SSL without
// ssl.ca.location, which segfaulted in rd_kafka_new).
#pragma once

#include <cstdlib>
#include <string>

namespace thaw::kafka {

inline std::string SystemCaFile() {
  const char* env = std::getenv("SSL_CERT_FILE");
  return env && *env ? env : "/etc/ssl/certs/ca-certificates.crt";
}

}  // namespace thaw::kafka

// The TLS side of a listener (`thaw serve --tls-cert/--tls-key
// [--tls-client-ca]`): an OpenSSL server context, TLS 1.2 or later, client
// certificates required and checked against a CA when one is given (mutual
// TLS). A certificate renewed on disk is picked up without a restart: each
// new connection asks Current(), which reloads when a file changed (checked
// at most once a second); connections already open keep theirs.
//
//   ASSIGN_OR_RAISE(auto tls, TlsServerContext::Make({cert, key, client_ca}));
//   kafka::Stream stream(std::move(socket), tls->Current());
#pragma once

#include <asio/ssl.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "thaw/common/status.h"

namespace thaw::kafka {

struct TlsServerOptions {
  std::string cert_file;       // PEM: the certificate chain, the server's first
  std::string key_file;        // PEM: its private key (unencrypted)
  std::string client_ca_file;  // PEM: CAs client certificates must chain to; empty: none asked
};

// A TLS error's reason as OpenSSL words it (e.g. "unsupported protocol",
// "peer did not return a certificate"), for a log line.
std::string TlsReason(const asio::error_code& ec);

class TlsServerContext {
 public:
  // Loads the files once: an unreadable or mismatched file is an error here
  // (kInvalidArgument naming the option), before anything listens.
  static Result<std::shared_ptr<TlsServerContext>> Make(TlsServerOptions options);

  // The context for a connection accepted now.
  std::shared_ptr<asio::ssl::context> Current();
  const TlsServerOptions& options() const { return options_; }

 private:
  explicit TlsServerContext(TlsServerOptions options) : options_(std::move(options)) {}
  Result<std::shared_ptr<asio::ssl::context>> Load() const;
  std::vector<std::filesystem::file_time_type> Stamps() const;

  TlsServerOptions options_;
  std::mutex mu_;
  std::shared_ptr<asio::ssl::context> current_;
  std::vector<std::filesystem::file_time_type> stamps_;
  std::chrono::steady_clock::time_point checked_{};
};

}  // namespace thaw::kafka

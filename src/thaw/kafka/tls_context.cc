#include "thaw/kafka/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "thaw/common/log.h"

namespace thaw::kafka {

namespace {

// OpenSSL's reason for the last failure, or asio's message.
std::string Reason(const asio::error_code& ec) {
  const unsigned long e = ERR_peek_last_error();
  std::string why = ec.message();
  if (e != 0) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    why = buf;
  }
  ERR_clear_error();
  return why;
}

}  // namespace

std::string TlsReason(const asio::error_code& ec) {
  if (ec.category() == asio::error::get_ssl_category()) {
    // asio puts OpenSSL's packed error in the value.
    char buf[256];
    ERR_error_string_n(static_cast<unsigned long>(ec.value()), buf, sizeof(buf));
    std::string s = buf;
    const size_t last = s.rfind(':');
    return last == std::string::npos ? s : s.substr(last + 1);
  }
  if (ec == asio::ssl::error::stream_truncated) return "the peer closed the connection during the handshake";
  return ec.message();
}

Result<std::shared_ptr<TlsServerContext>> TlsServerContext::Make(TlsServerOptions options) {
  if (options.cert_file.empty() != options.key_file.empty()) {
    return Status::Invalid("TLS needs both --tls-cert and --tls-key (PEM files)");
  }
  if (options.cert_file.empty()) return Status::Invalid("TLS needs --tls-cert and --tls-key (PEM files)");
  std::shared_ptr<TlsServerContext> t(new TlsServerContext(std::move(options)));
  t->stamps_ = t->Stamps();
  ASSIGN_OR_RAISE(t->current_, t->Load());
  t->checked_ = std::chrono::steady_clock::now();
  return t;
}

std::vector<std::filesystem::file_time_type> TlsServerContext::Stamps() const {
  std::vector<std::filesystem::file_time_type> out;
  for (const std::string* f : {&options_.cert_file, &options_.key_file, &options_.client_ca_file}) {
    std::error_code ec;
    out.push_back(f->empty() ? std::filesystem::file_time_type{} : std::filesystem::last_write_time(*f, ec));
  }
  return out;
}

Result<std::shared_ptr<asio::ssl::context>> TlsServerContext::Load() const {
  auto ctx = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_server);
  asio::error_code ec;
  ctx->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                       asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                       asio::ssl::context::no_tlsv1_1 | asio::ssl::context::single_dh_use,
                   ec);
  if (ec) return Status::IOError("TLS: cannot set the protocol versions: {}", Reason(ec));
  ctx->use_certificate_chain_file(options_.cert_file, ec);
  if (ec) {
    return Status::Invalid("--tls-cert {}: not a readable PEM certificate chain: {}", options_.cert_file, Reason(ec));
  }
  ctx->use_private_key_file(options_.key_file, asio::ssl::context::pem, ec);
  if (ec) {
    const std::string why = Reason(ec);
    if (why.find("key values mismatch") != std::string::npos) {
      return Status::Invalid("--tls-key {} is not the key of --tls-cert {}'s certificate", options_.key_file,
                             options_.cert_file);
    }
    return Status::Invalid("--tls-key {}: not a readable PEM private key (unencrypted): {}", options_.key_file, why);
  }
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    return Status::Invalid("--tls-key {} is not the key of --tls-cert {}'s certificate: {}", options_.key_file,
                           options_.cert_file, Reason({}));
  }
  if (!options_.client_ca_file.empty()) {
    ctx->load_verify_file(options_.client_ca_file, ec);
    if (ec) {
      return Status::Invalid("--tls-client-ca {}: not a readable PEM CA file: {}", options_.client_ca_file,
                             Reason(ec));
    }
    ctx->set_verify_mode(asio::ssl::verify_peer | asio::ssl::verify_fail_if_no_peer_cert, ec);
    if (ec) return Status::IOError("TLS: cannot require client certificates: {}", Reason(ec));
  }
  return ctx;
}

std::shared_ptr<asio::ssl::context> TlsServerContext::Current() {
  std::lock_guard lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (now - checked_ < std::chrono::seconds(1)) return current_;
  checked_ = now;
  auto stamps = Stamps();
  if (stamps == stamps_) return current_;
  auto loaded = Load();
  stamps_ = std::move(stamps);
  if (!loaded.ok()) {
    // Half-written files (cert renewed, key not yet): the old context serves
    // on, and the next change is tried again.
    log::Warn("TLS: the renewed files do not load ({}); new connections keep the previous certificate",
              loaded.status().message());
    return current_;
  }
  current_ = std::move(*loaded);
  log::Info("TLS: loaded the renewed certificate {} for new connections", options_.cert_file);
  return current_;
}

}  // namespace thaw::kafka

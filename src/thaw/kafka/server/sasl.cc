#include "thaw/kafka/server/sasl.h"

#include "thaw/kafka/scram.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace thaw::kafka::server {

namespace {

using scram::Attributes;
using scram::Base64;
using scram::Digest;
using scram::Equal;
using scram::Find;
using scram::Hash;
using scram::Hmac;
using scram::SaltedPassword;
using scram::SaslName;
using scram::Unbase64;

}  // namespace

Result<ScramCredential> MakeScramCredential(std::string_view mechanism, std::string_view password,
                                            int32_t iterations) {
  const EVP_MD* md = Digest(mechanism);
  if (!md) return Status::Invalid("unknown SCRAM mechanism '{}'", mechanism);
  if (iterations < 4096) return Status::Invalid("SCRAM iterations must be at least 4096 (Kafka's minimum)");
  ScramCredential c;
  c.iterations = iterations;
  c.salt.resize(32);
  if (RAND_bytes(reinterpret_cast<unsigned char*>(c.salt.data()), static_cast<int>(c.salt.size())) != 1) {
    return Status::IOError("no random bytes for a salt");
  }
  const std::string salted = SaltedPassword(md, password, c.salt, iterations);
  c.stored_key = Hash(md, Hmac(md, salted, "Client Key"));
  c.server_key = Hmac(md, salted, "Server Key");
  return c;
}

const std::vector<std::string>& SaslMechanisms() {
  static const std::vector<std::string> m = {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"};
  return m;
}

Result<std::shared_ptr<SaslUsers>> SaslUsers::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::Invalid("--sasl-users {}: cannot read the file", path);
  auto users = std::make_shared<SaslUsers>();
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string user, mechanism, field;
    fields >> user >> mechanism;
    if (!Digest(mechanism)) {
      return Status::Invalid("--sasl-users {} line {}: '{}' is not SCRAM-SHA-256 or SCRAM-SHA-512", path, n,
                             mechanism);
    }
    ScramCredential c;
    while (fields >> field) {
      const size_t eq = field.find('=');
      const std::string k = field.substr(0, eq), v = eq == std::string::npos ? "" : field.substr(eq + 1);
      if (k == "iterations") {
        c.iterations = std::atoi(v.c_str());
      } else if (k == "salt" || k == "stored_key" || k == "server_key") {
        auto raw = Unbase64(v);
        if (!raw) return Status::Invalid("--sasl-users {} line {}: {} is not base64", path, n, k);
        (k == "salt" ? c.salt : k == "stored_key" ? c.stored_key : c.server_key) = *raw;
      } else {
        return Status::Invalid("--sasl-users {} line {}: unknown field '{}'", path, n, k);
      }
    }
    if (c.iterations < 4096 || c.salt.empty() || c.stored_key.empty() || c.server_key.empty()) {
      return Status::Invalid(
          "--sasl-users {} line {}: needs iterations (>= 4096), salt, stored_key and server_key (write it with "
          "`thaw serve --sasl-users FILE --add-user NAME`)",
          path, n);
    }
    users->creds_[{user, mechanism}] = std::move(c);
  }
  if (users->creds_.empty()) {
    return Status::Invalid("--sasl-users {}: no users (add one with `thaw serve --sasl-users {} --add-user NAME`)",
                           path, path);
  }
  return users;
}

Status SaslUsers::AddUser(const std::string& path, const std::string& user, std::string_view password) {
  if (user.empty() || user.find_first_of(" \t\n,=") != std::string::npos) {
    return Status::Invalid("--add-user '{}': a user name without spaces, ',' or '='", user);
  }
  if (password.empty()) return Status::Invalid("--add-user {}: the password (read from stdin) is empty", user);
  std::vector<std::string> kept;
  if (std::ifstream in(path); in) {
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string u;
      fields >> u;
      if (u != user) kept.push_back(line);
    }
  }
  for (const char* mechanism : {"SCRAM-SHA-256", "SCRAM-SHA-512"}) {
    ASSIGN_OR_RAISE(auto c, MakeScramCredential(mechanism, password));
    kept.push_back(fmt::format("{} {} iterations={} salt={} stored_key={} server_key={}", user, mechanism,
                               c.iterations, Base64(c.salt), Base64(c.stored_key), Base64(c.server_key)));
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return Status::Invalid("--sasl-users {}: cannot write {}", path, tmp);
    ::chmod(tmp.c_str(), 0600);
    for (const auto& l : kept) out << l << '\n';
    if (!out.flush()) return Status::IOError("--sasl-users {}: writing {} failed", path, tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Status::IOError("--sasl-users {}: cannot replace it: {}", path, ec.message());
  return Status::OK();
}

const ScramCredential* SaslUsers::Find(const std::string& user, const std::string& mechanism) const {
  auto it = creds_.find({user, mechanism});
  return it == creds_.end() ? nullptr : &it->second;
}

bool SaslSession::Start(const std::string& mechanism) {
  const auto& offered = SaslMechanisms();
  if (std::find(offered.begin(), offered.end(), mechanism) == offered.end()) return false;
  mechanism_ = mechanism;
  step_ = 0;
  user_.clear();
  cred_ = nullptr;
  principal_.clear();  // KIP-368: a new handshake authenticates again
  return true;
}

Result<std::string> SaslSession::Step(std::string_view client, bool* done) {
  *done = false;
  const Status failed = Status::Invalid("Authentication failed: Invalid username or password");
  if (mechanism_ == "PLAIN") {
    // authzid NUL authcid NUL password
    const size_t a = client.find('\0');
    const size_t b = a == std::string_view::npos ? a : client.find('\0', a + 1);
    if (b == std::string_view::npos) return Status::Invalid("malformed PLAIN token");
    user_ = std::string(client.substr(a + 1, b - a - 1));
    const std::string_view authzid = client.substr(0, a);
    const std::string_view password = client.substr(b + 1);
    if (!authzid.empty() && authzid != user_) return failed;
    for (const char* m : {"SCRAM-SHA-256", "SCRAM-SHA-512"}) {
      const ScramCredential* c = users_->Find(user_, m);
      if (!c) continue;
      const EVP_MD* md = Digest(m);
      const std::string salted = SaltedPassword(md, password, c->salt, c->iterations);
      if (!Equal(Hash(md, Hmac(md, salted, "Client Key")), c->stored_key)) return failed;
      principal_ = "User:" + user_;
      *done = true;
      return std::string();
    }
    return failed;
  }
  const EVP_MD* md = Digest(mechanism_);
  if (!md) return Status::Invalid("no SASL mechanism selected (SaslHandshake first)");
  if (step_ == 0) {
    // client-first: gs2-header ("n,," or "n,a=authzid,") client-first-bare
    if (client.substr(0, 2) != "n," && client.substr(0, 2) != "y,") {
      return Status::Invalid("SCRAM client-first message without a gs2 header");
    }
    const size_t second = client.find(',', 2);
    if (second == std::string_view::npos) return Status::Invalid("malformed SCRAM client-first message");
    client_first_bare_ = std::string(client.substr(second + 1));
    const auto attrs = Attributes(client_first_bare_);
    auto name = SaslName(Find(attrs, 'n'));
    nonce_ = Find(attrs, 'r');
    if (!name || name->empty() || nonce_.empty()) return Status::Invalid("malformed SCRAM client-first message");
    user_ = *name;
    cred_ = users_->Find(user_, mechanism_);
    // An unknown user gets a made-up salt, so that the answer does not tell
    // which user names exist; the proof then fails.
    static const ScramCredential unknown = [] {
      ScramCredential c;
      c.salt = std::string(32, '\x5a');
      c.iterations = 4096;
      return c;
    }();
    const ScramCredential& c = cred_ ? *cred_ : unknown;
    std::string server_nonce(24, '\0');
    RAND_bytes(reinterpret_cast<unsigned char*>(server_nonce.data()), static_cast<int>(server_nonce.size()));
    nonce_ += Base64(server_nonce);
    server_first_ = fmt::format("r={},s={},i={}", nonce_, Base64(c.salt), c.iterations);
    step_ = 1;
    return server_first_;
  }
  if (step_ == 1) {
    const std::string msg(client);
    const size_t p = msg.rfind(",p=");
    if (p == std::string::npos) return Status::Invalid("malformed SCRAM client-final message");
    const std::string without_proof = msg.substr(0, p);
    const auto attrs = Attributes(msg);
    // The nonce must end with the one the server sent: librdkafka sends its
    // own nonce in front of it again, and Kafka accepts that (endsWith).
    const std::string r = Find(attrs, 'r');
    if (r.size() < nonce_.size() || r.compare(r.size() - nonce_.size(), nonce_.size(), nonce_) != 0) return failed;
    auto proof = Unbase64(Find(attrs, 'p'));
    step_ = 2;
    if (!cred_ || !proof) return failed;
    const std::string auth_message = client_first_bare_ + "," + server_first_ + "," + without_proof;
    const std::string signature = Hmac(md, cred_->stored_key, auth_message);
    if (proof->size() != signature.size()) return failed;
    std::string client_key(signature.size(), '\0');
    for (size_t i = 0; i < signature.size(); ++i) client_key[i] = static_cast<char>((*proof)[i] ^ signature[i]);
    if (!Equal(Hash(md, client_key), cred_->stored_key)) return failed;
    principal_ = "User:" + user_;
    *done = true;
    return "v=" + Base64(Hmac(md, cred_->server_key, auth_message));
  }
  return Status::Invalid("SCRAM exchange already complete");
}

}  // namespace thaw::kafka::server

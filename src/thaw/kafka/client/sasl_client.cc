#include "thaw/kafka/client/sasl_client.h"

#include <openssl/rand.h>

#include <charconv>

#include "thaw/kafka/protocol/errors.h"
#include "thaw/kafka/scram.h"

namespace thaw::kafka::client {

namespace {

// RFC 5802 saslname: ',' and '=' escaped.
std::string EscapeName(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == ',') {
      out += "=2C";
    } else if (c == '=') {
      out += "=3D";
    } else {
      out += c;
    }
  }
  return out;
}

std::string BrokerSays(int16_t code, const std::optional<std::string>& message) {
  std::string out(ErrorName(code));
  if (message && !message->empty()) out += ": " + *message;
  return out;
}

}  // namespace

std::string ScramClient::First() {
  client_first_bare = "n=" + EscapeName(username) + ",r=" + nonce;
  return "n,," + client_first_bare;
}

Result<std::string> ScramClient::Final(std::string_view server_first) {
  const EVP_MD* md = scram::Digest(mechanism);
  if (!md) return Status::Invalid("SASL mechanism {} is not SCRAM", mechanism);
  const auto attrs = scram::Attributes(server_first);
  const std::string r = scram::Find(attrs, 'r');
  auto salt = scram::Unbase64(scram::Find(attrs, 's'));
  const std::string i = scram::Find(attrs, 'i');
  int32_t iterations = 0;
  auto [end, ec] = std::from_chars(i.data(), i.data() + i.size(), iterations);
  if (r.size() <= nonce.size() || r.compare(0, nonce.size(), nonce) != 0 || !salt || ec != std::errc() ||
      end != i.data() + i.size() || iterations < 1 || iterations > 1'000'000) {
    return Status::Corrupt("the broker's SCRAM server-first message is malformed or does not extend Thaw's nonce");
  }
  const std::string salted = scram::SaltedPassword(md, password, *salt, iterations);
  const std::string client_key = scram::Hmac(md, salted, "Client Key");
  const std::string stored_key = scram::Hash(md, client_key);
  const std::string without_proof = "c=biws,r=" + r;  // biws = base64("n,,")
  const std::string auth_message = client_first_bare + "," + std::string(server_first) + "," + without_proof;
  const std::string signature = scram::Hmac(md, stored_key, auth_message);
  std::string proof(client_key.size(), '\0');
  for (size_t k = 0; k < proof.size(); ++k) proof[k] = static_cast<char>(client_key[k] ^ signature[k]);
  expected_server_signature = scram::Hmac(md, scram::Hmac(md, salted, "Server Key"), auth_message);
  return without_proof + ",p=" + scram::Base64(proof);
}

Status ScramClient::Verify(std::string_view server_final) const {
  const auto attrs = scram::Attributes(server_final);
  if (std::string e = scram::Find(attrs, 'e'); !e.empty()) {
    return Status::PermissionDenied("SCRAM: the broker refused: {}", e);
  }
  auto v = scram::Unbase64(scram::Find(attrs, 'v'));
  if (!v || !scram::Equal(*v, expected_server_signature)) {
    return Status::PermissionDenied(
        "SCRAM: the broker's signature does not match: it does not know this user's credentials (not the broker "
        "you meant?)");
  }
  return Status::OK();
}

asio::awaitable<Status> Authenticate(Connection& conn, const ConnectionOptions::Sasl& sasl) {
  const std::string where = fmt::format("{}: SASL {} as user '{}'", conn.address(), sasl.mechanism, sasl.username);
  msg::SaslHandshakeRequest hs;
  hs.mechanism = sasl.mechanism;
  auto hr = co_await conn.Call<msg::SaslHandshakeRequest, msg::SaslHandshakeResponse>(hs, 1);
  if (!hr.ok()) co_return hr.status().WithContext(where + ": SaslHandshake");
  if (hr->error_code != 0) {
    std::string offered;
    for (const auto& m : hr->mechanisms) offered += (offered.empty() ? "" : ", ") + m;
    co_return Status::PermissionDenied("{}: the broker refused the mechanism ({}); it offers: {}", where,
                                       ErrorName(hr->error_code), offered.empty() ? "none" : offered);
  }
  auto step = [&](std::string token) -> asio::awaitable<Result<std::string>> {
    msg::SaslAuthenticateRequest req;
    req.auth_bytes = std::move(token);
    auto r = co_await conn.Call<msg::SaslAuthenticateRequest, msg::SaslAuthenticateResponse>(req, 1);
    if (!r.ok()) co_return r.status().WithContext(where + ": SaslAuthenticate");
    if (r->error_code != 0) {
      co_return Status::PermissionDenied("{}: {} (check -X sasl.username / sasl.password and the mechanism)", where,
                                         BrokerSays(r->error_code, r->error_message));
    }
    co_return std::move(r->auth_bytes);
  };
  if (sasl.mechanism == "PLAIN") {
    std::string token;
    token += '\0';
    token += sasl.username;
    token += '\0';
    token += sasl.password;
    auto r = co_await step(std::move(token));
    co_return r.ok() ? Status::OK() : r.status();
  }
  ScramClient scram{sasl.mechanism, sasl.username, sasl.password, {}, {}, {}};
  std::string raw(18, '\0');
  RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(raw.size()));
  scram.nonce = scram::Base64(raw);
  auto first = co_await step(scram.First());
  if (!first.ok()) co_return first.status();
  auto final_message = scram.Final(*first);
  if (!final_message.ok()) co_return final_message.status().WithContext(where);
  auto last = co_await step(*final_message);
  if (!last.ok()) co_return last.status();
  Status verified = scram.Verify(*last);
  co_return verified.ok() ? verified : verified.WithContext(where);
}

}  // namespace thaw::kafka::client

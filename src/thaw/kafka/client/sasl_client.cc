#include "thaw/kafka/client/sasl_client.h"

#include <openssl/rand.h>


#include "thaw/kafka/protocol/errors.h"
#include "thaw/kafka/scram.h"

namespace thaw::kafka::client {

namespace {

std::string BrokerSays(int16_t code, const std::optional<std::string>& message) {
  std::string out(ErrorName(code));
  if (message && !message->empty()) out += ": " + *message;
  return out;
}

}  // namespace

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
  scram::Client client{sasl.mechanism, sasl.username, sasl.password, {}, {}, {}};
  std::string raw(18, '\0');
  RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(raw.size()));
  client.nonce = scram::Base64(raw);
  auto first = co_await step(client.First());
  if (!first.ok()) co_return first.status();
  auto final_message = client.Final(*first);
  if (!final_message.ok()) co_return final_message.status().WithContext(where);
  auto last = co_await step(*final_message);
  if (!last.ok()) co_return last.status();
  Status verified = client.Verify(*last);
  co_return verified.ok() ? verified : verified.WithContext(where);
}

}  // namespace thaw::kafka::client

// SASL on the listener: SaslHandshake (KIP-43) picks the mechanism,
// SaslAuthenticate (KIP-152) carries its tokens; the exchanges themselves
// are kafka/server/sasl.h's.
#include "thaw/common/log.h"
#include "thaw/kafka/server/handlers/handlers.h"
#include "thaw/kafka/server/sasl.h"

namespace thaw::kafka::server {

// KIP-43: the mechanism for the SaslAuthenticate exchanges that follow. A
// listener without --sasl-users offers none: a client configured for SASL is
// told so (it reports the mismatch instead of hanging).
asio::awaitable<msg::SaslHandshakeResponse> HandleSaslHandshake(RequestContext& ctx,
                                                                const msg::SaslHandshakeRequest& req) {
  msg::SaslHandshakeResponse resp;
  if (!ctx.sasl) {
    resp.error_code = static_cast<int16_t>(ErrorCode::kUnsupportedSaslMechanism);
    co_return resp;
  }
  resp.mechanisms = SaslMechanisms();
  if (ctx.api_version == 0 || !ctx.sasl->Start(req.mechanism)) {
    // v0 (raw tokens after the handshake) is not spoken: every current
    // client sends v1 and SaslAuthenticate.
    resp.error_code = static_cast<int16_t>(ErrorCode::kUnsupportedSaslMechanism);
    ctx.close_after_response = true;
  }
  co_return resp;
}

// KIP-152: one token of the exchange the handshake chose. A failure is
// answered SASL_AUTHENTICATION_FAILED (the user named in the log, never the
// password) and the connection closes, as Kafka does.
asio::awaitable<msg::SaslAuthenticateResponse> HandleSaslAuthenticate(RequestContext& ctx,
                                                                      const msg::SaslAuthenticateRequest& req) {
  msg::SaslAuthenticateResponse resp;
  if (!ctx.sasl || !ctx.sasl->started()) {
    resp.error_code = static_cast<int16_t>(ErrorCode::kIllegalSaslState);
    resp.error_message = "SaslAuthenticate before a SaslHandshake";
    ctx.close_after_response = true;
    co_return resp;
  }
  bool done = false;
  auto answer = ctx.sasl->Step(std::string_view(req.auth_bytes.data(), req.auth_bytes.size()), &done);
  if (!answer.ok()) {
    resp.error_code = static_cast<int16_t>(ErrorCode::kSaslAuthenticationFailed);
    resp.error_message = answer.status().message();
    ctx.close_after_response = true;
    log::Warn("client {} (client id '{}'): SASL authentication failed for user '{}': {}", ctx.peer, ctx.client_id,
              ctx.sasl->user_tried(), answer.status().message());
    co_return resp;
  }
  resp.auth_bytes = std::move(*answer);
  resp.session_lifetime_ms = 0;  // no expiry: re-authentication is the client's choice (KIP-368)
  if (done) log::Debug("client {}: authenticated as {}", ctx.peer, ctx.sasl->principal());
  co_return resp;
}

}  // namespace thaw::kafka::server

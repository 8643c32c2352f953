#include "thaw/kafka/server/connection.h"

#include <array>
#include <vector>

#include "thaw/common/log.h"
#include "thaw/kafka/frame_io.h"
#include "thaw/kafka/protocol/errors.h"
#include "thaw/kafka/protocol/messages.h"
#include "thaw/kafka/protocol/response_frame.h"
#include "thaw/kafka/protocol/wire.h"
#include "thaw/kafka/server/dispatch.h"

namespace thaw::kafka::server {

namespace {

using asio::use_awaitable;
constexpr int16_t kApiVersionsKey = 18, kSaslHandshakeKey = 17, kSaslAuthenticateKey = 36;

int32_t ReadBigEndian32(const uint8_t* p) {
  return static_cast<int32_t>((uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3]);
}

// KIP-511: an ApiVersions request at a version this server does not know is
// answered in the v0 format with UNSUPPORTED_VERSION and the served ranges,
// so that the client retries at one it does.
std::string UnsupportedApiVersionsBody() {
  msg::ApiVersionsResponse resp;
  resp.error_code = static_cast<int16_t>(ErrorCode::kUnsupportedVersion);
  for (const ApiHandler& h : ApiHandlers()) {
    msg::ApiVersionsResponse::ApiVersion v;
    v.api_key = h.key;
    v.min_version = h.min_version;
    v.max_version = h.max_version;
    resp.api_keys.push_back(v);
  }
  WireWriter w;
  resp.Write(w, 0);
  return std::move(w).Take();
}

}  // namespace

asio::awaitable<void> ServeConnection(Broker& broker, std::shared_ptr<ConnectionState> conn,
                                      const ServerOptions& options) {
  std::string client_id = "?";
  auto fail = [&](const std::string& why) {
    log::Warn("client {} (client id '{}'): {}; closing the connection", conn->peer, client_id, why);
  };
  std::string frame;
  if (asio::error_code hs = co_await conn->stream.Handshake(); hs) {
    // A plaintext client on a TLS port, an old protocol version, a missing
    // or untrusted client certificate: one line, the connection closed.
    if (!broker.stopping) fail("TLS handshake failed: " + TlsReason(hs));
    conn->closed = true;
    conn->stream.Close();
    co_return;
  }
  for (;;) {
    uint8_t size_bytes[4];
    asio::error_code ec;
    co_await asio::async_read(conn->stream, asio::buffer(size_bytes, 4), asio::redirect_error(use_awaitable, ec));
    if (ec) {
      if (ec != asio::error::eof && ec != asio::error::operation_aborted && ec != asio::error::connection_reset &&
          !broker.stopping) {
        fail("read failed: " + ec.message());
      }
      break;
    }
    conn->busy = true;
    const int32_t size = ReadBigEndian32(size_bytes);
    if (size < 8 || size > options.max_frame_bytes) {
      fail(fmt::format("request frame of {} bytes is outside the accepted 8..{} (socket.request.max.bytes)", size,
                       options.max_frame_bytes));
      break;
    }
    frame.clear();
    ec = co_await ReadGrowing(conn->stream, &frame, 0, static_cast<size_t>(size));
    if (ec) {
      fail(fmt::format("connection lost inside a {}-byte request frame: {}", size, ec.message()));
      break;
    }
    // Every request header version starts with key, version, correlation id.
    const auto* p = reinterpret_cast<const uint8_t*>(frame.data());
    const int16_t api_key = static_cast<int16_t>((p[0] << 8) | p[1]);
    const int16_t api_version = static_cast<int16_t>((p[2] << 8) | p[3]);
    const int32_t correlation_id = ReadBigEndian32(p + 4);
    const ApiHandler* handler = FindApiHandler(api_key);
    const ApiSpec* spec = FindApiSpec(api_key);
    if (!handler || !spec) {
      fail(fmt::format("API key {} is not served by Thaw (ApiVersions lists the served APIs)", api_key));
      break;
    }
    if (api_version < handler->min_version || api_version > handler->max_version) {
      if (api_key == kApiVersionsKey) {
        const std::string reply_body = UnsupportedApiVersionsBody();
        const std::string reply_header = EncodeResponseHead(correlation_id, 0, reply_body.size());
        const std::array<asio::const_buffer, 2> reply{asio::buffer(reply_header), asio::buffer(reply_body)};
        co_await asio::async_write(conn->stream, reply, asio::redirect_error(use_awaitable, ec));
        if (ec) break;
        conn->busy = false;
        if (broker.stopping) break;
        continue;
      }
      fail(fmt::format("{} version {} is outside the served range {}..{}", spec->name, api_version,
                       handler->min_version, handler->max_version));
      break;
    }
    if (conn->sasl && !conn->sasl->authenticated() && api_key != kApiVersionsKey && api_key != kSaslHandshakeKey &&
        api_key != kSaslAuthenticateKey) {
      // As Kafka: nothing but the handshake before authentication.
      fail(fmt::format("{} before SASL authentication (the listener requires SASL: security.protocol=SASL_PLAINTEXT "
                       "or SASL_SSL)",
                       spec->name));
      break;
    }
    WireReader in(frame);
    msg::RequestHeader header;
    if (Status st = header.Read(in, msg::RequestHeaderVersion(api_key, api_version)); !st.ok()) {
      fail(fmt::format("{} v{} request header does not decode: {}", spec->name, api_version, st.message()));
      break;
    }
    if (header.client_id) client_id = *header.client_id;
    RequestContext ctx{broker, api_key, api_version, correlation_id, client_id, conn->peer};
    ctx.sasl = conn->sasl.get();
    ctx.acl = options.acl.get();
    WireWriter body;
    Status st = co_await handler->handle(ctx, in, body);
    if (!st.ok()) {
      fail(fmt::format("{} v{} request does not decode: {}", spec->name, api_version, st.message()));
      break;
    }
    if (ctx.send_response) {
      // One gather write: the header, then the body's pieces in place (a
      // Fetch's record batches straight from the batch cache, not copied).
      const std::string reply_header =
          EncodeResponseHead(correlation_id, msg::ResponseHeaderVersion(api_key, api_version), body.size());
      std::vector<asio::const_buffer> reply{asio::buffer(reply_header)};
      body.ForEachPiece([&](std::string_view piece) { reply.push_back(asio::buffer(piece.data(), piece.size())); });
      co_await asio::async_write(conn->stream, reply, asio::redirect_error(use_awaitable, ec));
      if (ec) {
        if (!broker.stopping) fail("write failed: " + ec.message());
        break;
      }
    }
    conn->busy = false;
    if (ctx.close_after_response) break;  // authentication failed: as Kafka, the connection closes
    if (broker.stopping) break;
    if (frame.capacity() > (size_t{1} << 20)) std::string().swap(frame);  // don't keep a big frame's buffer
  }
  conn->busy = false;
  conn->closed = true;
  conn->stream.Close();
}

}  // namespace thaw::kafka::server

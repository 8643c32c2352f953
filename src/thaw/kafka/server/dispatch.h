// The request dispatch table of `thaw serve`: one entry per Kafka API it
// answers, {api key, lowest and highest version served, handler}. The
// version range is declared here once; ApiVersions advertises exactly these
// ranges and the connection refuses anything outside them. Whether a version
// is flexible comes from the generated spec table (messages.h).
//
// A handler decodes its request with the generated codec, does its work
// (blocking work through RunBlocking) and encodes its response body; the
// connection writes the response header around it. Handlers live in
// handlers/*.cc, one per API (or a few closely related APIs per file).
#pragma once

#include <asio.hpp>
#include <cstdint>
#include <span>
#include <string>

#include "thaw/common/status.h"
#include "thaw/kafka/protocol/wire.h"
#include "thaw/kafka/server/broker.h"

namespace thaw::kafka::server {

struct RequestContext {
  Broker& broker;
  int16_t api_key = 0;
  int16_t api_version = 0;
  int32_t correlation_id = 0;
  std::string client_id;
  std::string peer;  // host:port of the client
  // Cleared by a handler whose request wants no response (Produce acks=0).
  bool send_response = true;
  // The connection's SASL state (null: the listener has no SASL); a handler
  // sets close_after_response when authentication failed.
  class SaslSession* sasl = nullptr;
  bool close_after_response = false;
  // The listener's ACLs (--acl-file; null: every request is allowed). The
  // handlers ask through Authorized() (handlers/authorize.h).
  const class Authorizer* acl = nullptr;
};

// Decodes the request body from `in`, appends the response body to `out`. A
// non-OK status means the request could not be decoded or answered at all:
// the connection logs it and closes.
using Handler = asio::awaitable<Status> (*)(RequestContext& ctx, WireReader& in, WireWriter& out);

struct ApiHandler {
  int16_t key;
  int16_t min_version;
  int16_t max_version;
  Handler handle;
};

// Every API served, by key.
std::span<const ApiHandler> ApiHandlers();
const ApiHandler* FindApiHandler(int16_t key);

// Adapts a typed handler `Resp Fn(RequestContext&, const Req&)` (a coroutine)
// to the table's signature: decode, call, encode at the request's version.
template <typename Req, typename Resp, asio::awaitable<Resp> (*Fn)(RequestContext&, const Req&)>
asio::awaitable<Status> Typed(RequestContext& ctx, WireReader& in, WireWriter& out) {
  Req req;
  Status st = req.Read(in, ctx.api_version);
  if (!st.ok()) co_return st;
  Resp resp = co_await Fn(ctx, req);
  if (ctx.send_response) resp.Write(out, ctx.api_version);
  co_return Status::OK();
}

}  // namespace thaw::kafka::server

#include "thaw/merged/proxy_connection.h"

#include <array>

#include "thaw/common/log.h"
#include "thaw/kafka/frame_io.h"
#include "thaw/kafka/tls_context.h"
#include "thaw/kafka/protocol/errors.h"
#include "thaw/kafka/protocol/messages.h"
#include "thaw/kafka/protocol/response_frame.h"
#include "thaw/merged/api_versions.h"
#include "thaw/merged/proxy.h"
#include "thaw/merged/splice_relay.h"
#include "thaw/merged/tiered_requests.h"

namespace thaw::merged {

namespace msg = kafka::msg;

namespace {

using asio::use_awaitable;
using kafka::client::FrameSize;

constexpr int16_t kProduce = 0, kFetch = 1, kListOffsets = 2, kMetadata = 3, kOffsetCommit = 8, kOffsetFetch = 9,
                  kFindCoordinator = 10, kApiVersions = 18, kDescribeCluster = 60;

void Sleep(asio::steady_timer& t) { t.expires_at(asio::steady_timer::time_point::max()); }

// Produce's acks (after the header and transactional_id); nullopt when the
// request does not decode that far (the broker will answer or close).
std::optional<int16_t> ProduceAcks(std::string_view frame, int16_t version) {
  kafka::WireReader in(frame);
  msg::RequestHeader header;
  if (!header.Read(in, msg::RequestHeaderVersion(kProduce, version)).ok()) return std::nullopt;
  std::optional<std::string> transactional_id;
  if (!in.ReadNullableString(&transactional_id, version >= 9, true, "transactional_id").ok()) return std::nullopt;
  int16_t acks = 0;
  if (!in.ReadInt16(&acks, "acks").ok()) return std::nullopt;
  return acks;
}

// KIP-511's answer to an ApiVersions Thaw cannot decode: UNSUPPORTED_VERSION
// in the v0 format with the ranges Thaw can relay, so the client retries at
// one it knows.
std::string UnsupportedApiVersions(int32_t correlation_id) {
  msg::ApiVersionsResponse resp;
  resp.error_code = static_cast<int16_t>(kafka::ErrorCode::kUnsupportedVersion);
  for (const kafka::ApiSpec& spec : kafka::GeneratedApis()) {
    if (spec.key != kApiVersions) continue;
    msg::ApiVersionsResponse::ApiVersion v;
    v.api_key = spec.key;
    v.min_version = spec.min_version;
    v.max_version = spec.latest_version_unstable ? spec.max_version - 1 : spec.max_version;
    resp.api_keys.push_back(v);
  }
  kafka::WireWriter w;
  resp.Write(w, 0);
  return kafka::client::EncodeResponseFrame(correlation_id, 0, w.data());
}

// Decodes a response frame (header and body), lets `edit` change it, and
// encodes it again; false when it does not decode.
template <typename Resp, typename Edit>
bool Reencode(std::string* frame, int16_t api_key, int16_t version, Edit edit) {
  kafka::WireReader in(*frame);
  msg::ResponseHeader header;
  const int16_t hv = msg::ResponseHeaderVersion(api_key, version);
  if (!header.Read(in, hv).ok()) return false;
  Resp resp;
  if (!resp.Read(in, version).ok()) return false;
  edit(resp);
  kafka::WireWriter w;
  header.Write(w, hv);
  resp.Write(w, version);
  *frame = std::move(w).Take();
  return true;
}

// Decodes a request frame's header and body, if Thaw's codec knows its
// version; false otherwise (the request then goes as it is).
template <typename Req>
bool DecodeRequest(std::string_view body, const kafka::client::RequestPeek& peek, msg::RequestHeader* header,
                   Req* req) {
  const auto* spec = kafka::FindApiSpec(peek.api_key);
  if (!spec || peek.api_version < spec->min_version || peek.api_version > spec->max_version) return false;
  kafka::WireReader in(body);
  return header->Read(in, msg::RequestHeaderVersion(peek.api_key, peek.api_version)).ok() &&
         req->Read(in, peek.api_version).ok();
}

template <typename Req>
std::string EncodeRequest(const msg::RequestHeader& header, const Req& req, int16_t version) {
  kafka::WireWriter w;
  req.Write(w, version);
  return kafka::client::EncodeRequestFrame(header, msg::RequestHeaderVersion(Req::kApiKey, version), w.data());
}

}  // namespace

ProxyConnection::ProxyConnection(Proxy& proxy, kafka::Stream client, int32_t node_id)
    : proxy_(proxy),
      client_(std::move(client)),
      node_id_(node_id),
      relay_wake_(client_.get_executor()),
      drained_wake_(client_.get_executor()) {
  asio::error_code ec;
  auto ep = client_.socket().remote_endpoint(ec);
  peer_ = ec ? "?" : fmt::format("{}:{}", ep.address().to_string(), ep.port());
  client_.socket().set_option(asio::ip::tcp::no_delay(true), ec);
}

void ProxyConnection::Fail(const std::string& why) {
  if (closed_) return;
  log::Warn("client {} (client id '{}'){}: {}; closing the connection", peer_, client_id_,
            node_id_ >= 0 ? fmt::format(" on broker {}'s port", node_id_) : std::string(), why);
  Close();
}

void ProxyConnection::UpstreamLost(const std::string& why) {
  proxy_.NoteLost(node_id_, fmt::format("client {} (client id '{}'): upstream {}; closing the connection (the client "
                                        "reconnects)",
                                        peer_, client_id_, why));
  Close();
}

void ProxyConnection::Close() {
  if (closed_) return;
  closed_ = true;
  client_.Close();
  if (upstream_) upstream_->Close();
  relay_wake_.cancel();
  drained_wake_.cancel();
}

asio::awaitable<void> ProxyConnection::Run() {
  auto self = shared_from_this();
  if (asio::error_code hs = co_await client_.Handshake(); hs) {
    // Before any upstream connection: a plaintext client on a TLS port,
    // an old protocol, a missing client certificate.
    if (!proxy_.stopping()) Fail("TLS handshake failed: " + kafka::TlsReason(hs));
    Close();
    co_return;
  }
  auto up = co_await proxy_.ConnectUpstream(node_id_);
  if (!up.ok()) {
    // The client sees what it sees when a broker is down, and retries.
    proxy_.NoteUpstream(node_id_, up.status());
    Close();
    co_return;
  }
  proxy_.NoteUpstream(node_id_, Status::OK());
  upstream_ = std::move(*up);
  asio::co_spawn(client_.get_executor(), [self]() { return self->Relay(); }, asio::detached);
  co_await ClientLoop();
  Close();
}

asio::awaitable<bool> ProxyConnection::WriteClient(std::string_view frame, std::string_view more) {
  asio::error_code ec;
  const std::array<asio::const_buffer, 2> buffers{asio::buffer(frame.data(), frame.size()),
                                                   asio::buffer(more.data(), more.size())};
  co_await asio::async_write(client_, buffers, asio::redirect_error(use_awaitable, ec));
  co_return WriteDone(ec);
}

asio::awaitable<bool> ProxyConnection::WriteClientPieces(std::string_view head, const kafka::WireWriter& body) {
  std::vector<asio::const_buffer> buffers{asio::buffer(head.data(), head.size())};
  body.ForEachPiece([&](std::string_view piece) { buffers.push_back(asio::buffer(piece.data(), piece.size())); });
  asio::error_code ec;
  co_await asio::async_write(client_, buffers, asio::redirect_error(use_awaitable, ec));
  co_return WriteDone(ec);
}

bool ProxyConnection::WriteDone(const asio::error_code& ec) {
  if (!ec) return true;
  // A client that closed its end (broken pipe, reset) just went away.
  const bool gone = ec == asio::error::broken_pipe || ec == asio::error::connection_reset ||
                    ec == asio::error::eof || ec == asio::error::operation_aborted;
  if (!closed_ && !gone && !proxy_.stopping()) Fail("write failed: " + ec.message());
  Close();
  return false;
}

asio::awaitable<bool> ProxyConnection::Forward(std::string_view frame, const Pending* pending) {
  if (pending) {
    pending_.push_back(*pending);
    relay_wake_.cancel();
  }
  Status st = co_await upstream_->WriteFrame(frame);
  if (!st.ok()) {
    if (!closed_) UpstreamLost(st.message());
    Close();
    co_return false;
  }
  co_return true;
}

asio::awaitable<void> ProxyConnection::Drained() {
  while (!pending_.empty() && !closed_) {
    Sleep(drained_wake_);
    asio::error_code ec;
    co_await drained_wake_.async_wait(asio::redirect_error(use_awaitable, ec));
  }
}

bool ProxyConnection::RewriteResponse(const Pending& p, std::string* frame) {
  BrokerMap& brokers = proxy_.broker_map();
  switch (p.rewrite) {
    case Rewrite::kNone:
      return true;
    case Rewrite::kMetadata:
      return Reencode<msg::MetadataResponse>(frame, p.api_key, p.api_version,
                                             [&](msg::MetadataResponse& r) {
                                               brokers.RewriteMetadata(r);
                                               if (p.views) {
                                                 FinishMetadata(*proxy_.tiers().views, *p.views,
                                                                *proxy_.tiers().tables, r);
                                               }
                                             });
    case Rewrite::kFindCoordinator:
      return Reencode<msg::FindCoordinatorResponse>(
          frame, p.api_key, p.api_version, [&](msg::FindCoordinatorResponse& r) { brokers.RewriteFindCoordinator(r); });
    case Rewrite::kDescribeCluster:
      return Reencode<msg::DescribeClusterResponse>(
          frame, p.api_key, p.api_version, [&](msg::DescribeClusterResponse& r) { brokers.RewriteDescribeCluster(r); });
    case Rewrite::kOffsetCommit:
      return Reencode<msg::OffsetCommitResponse>(frame, p.api_key, p.api_version, [&](msg::OffsetCommitResponse& r) {
        RenameBasesToViews(*proxy_.tiers().views, *p.renamed, r);
      });
    case Rewrite::kOffsetFetch:
      return Reencode<msg::OffsetFetchResponse>(frame, p.api_key, p.api_version, [&](msg::OffsetFetchResponse& r) {
        RenameBasesToViews(*proxy_.tiers().views, *p.renamed, r);
      });
    case Rewrite::kApiVersions: {
      kafka::WireReader in(*frame);
      msg::ResponseHeader header;
      if (!header.Read(in, 0).ok()) return false;
      msg::ApiVersionsResponse resp;
      if (!resp.Read(in, p.api_version).ok()) return false;
      for (const auto& v : resp.api_keys) {
        if (v.api_key != kListOffsets) continue;
        auto range = NarrowedRange(v.api_key, v.min_version, v.max_version);
        if (range) list_offsets_version_ = range->second;
      }
      NarrowApiVersions(resp);
      kafka::WireWriter w;
      header.Write(w, 0);
      resp.Write(w, p.api_version);
      *frame = std::move(w).Take();
      return true;
    }
  }
  return false;
}

asio::awaitable<bool> ProxyConnection::StreamResponse(const Pending& p) {
  // A response relayed as it is: its size and correlation id are read and
  // checked, then the rest moves to the client as it arrives: through a pipe
  // with splice(2) when it is large (its bytes never enter Thaw), else
  // through a buffer of at most kStreamChunk. The client gets its first bytes
  // before the last arrive, and a 50 MiB Fetch response costs no 50 MiB here.
  constexpr size_t kStreamChunk = size_t{256} << 10;
  constexpr size_t kSpliceFrom = size_t{64} << 10;
  auto& up = upstream_->stream();
  uint8_t head[8];
  asio::error_code ec;
  co_await asio::async_read(up, asio::buffer(head, 8), asio::redirect_error(use_awaitable, ec));
  if (ec) {
    if (!closed_) {
      UpstreamLost(fmt::format("{}: {}", upstream_->address(),
                               ec == asio::error::eof ? std::string("the broker closed the connection") : ec.message()));
    }
    co_return false;
  }
  const int32_t size = FrameSize(head);
  if (size < 4 || size > proxy_.options().upstream_options.max_frame_bytes) {
    Fail(fmt::format("the upstream's response frame of {} bytes is outside the accepted 4..{}", size,
                     proxy_.options().upstream_options.max_frame_bytes));
    co_return false;
  }
  const int32_t correlation_id = FrameSize(head + 4);
  if (correlation_id != p.correlation_id) {
    Fail(fmt::format("the upstream answered correlation id {} where {} was due", correlation_id, p.correlation_id));
    co_return false;
  }
  if (!co_await WriteClient(std::string_view(reinterpret_cast<const char*>(head), 8))) co_return false;
  size_t remaining = static_cast<size_t>(size) - 4;
  // (Not when either leg is TLS: those bytes go through OpenSSL.)
  if (remaining >= kSpliceFrom && !client_.tls() && !up.tls() && splice_pipe_.Open()) {
    const SpliceResult r = co_await SpliceBytes(up.socket(), client_.socket(), remaining, splice_pipe_);
    if (!r.error) co_return true;
    if (closed_) co_return false;
    if (r.upstream_side) {
      UpstreamLost(fmt::format("{}: connection lost inside a {}-byte response: {}", upstream_->address(), size,
                               r.eof ? std::string("the broker closed the connection") : r.error.message()));
    } else {
      const bool gone = r.error == std::errc::broken_pipe || r.error == std::errc::connection_reset;
      if (!gone && !proxy_.stopping()) Fail("write failed: " + r.error.message());
      Close();
    }
    co_return false;
  }
  while (remaining > 0) {
    const size_t n = std::min(remaining, kStreamChunk);
    if (stream_buffer_.size() < n) stream_buffer_.resize(n);
    co_await asio::async_read(up, asio::buffer(stream_buffer_.data(), n), asio::redirect_error(use_awaitable, ec));
    if (ec) {
      if (!closed_) {
        UpstreamLost(fmt::format("{}: connection lost inside a {}-byte response: {}", upstream_->address(), size,
                                 ec.message()));
      }
      co_return false;
    }
    if (!co_await WriteClient(std::string_view(stream_buffer_.data(), n))) co_return false;
    remaining -= n;
  }
  co_return true;
}

ProxyConnection::Rewrite ProxyConnection::RewriteOf(int16_t api_key) {
  switch (api_key) {
    case kMetadata:
      return Rewrite::kMetadata;
    case kFindCoordinator:
      return Rewrite::kFindCoordinator;
    case kDescribeCluster:
      return Rewrite::kDescribeCluster;
    case kApiVersions:
      return Rewrite::kApiVersions;
    default:
      return Rewrite::kNone;
  }
}

asio::awaitable<void> ProxyConnection::Relay() {
  auto self = shared_from_this();
  std::string frame;
  std::string out;
  while (!closed_) {
    if (pending_.empty()) {
      if (proxy_.stopping()) break;
      Sleep(relay_wake_);
      asio::error_code ec;
      co_await relay_wake_.async_wait(asio::redirect_error(use_awaitable, ec));
      continue;
    }
    const Pending p = pending_.front();
    if (p.rewrite == Rewrite::kNone) {
      if (!co_await StreamResponse(p)) break;
      pending_.pop_front();
      if (pending_.empty()) drained_wake_.cancel();
      continue;
    }
    Status st = co_await upstream_->ReadFrame(&frame);
    if (!st.ok()) {
      if (!closed_) UpstreamLost(st.message());
      break;
    }
    int32_t correlation_id = 0;
    if (!kafka::client::PeekCorrelationId(frame, &correlation_id) || correlation_id != p.correlation_id) {
      Fail(fmt::format("the upstream answered correlation id {} where {} was due", correlation_id,
                       p.correlation_id));
      break;
    }
    if (p.rewrite != Rewrite::kNone && !RewriteResponse(p, &frame)) {
      if (p.rewrite == Rewrite::kApiVersions) {
        out = UnsupportedApiVersions(p.correlation_id);
      } else {
        const kafka::ApiSpec* spec = kafka::FindApiSpec(p.api_key);
        Fail(fmt::format("the upstream's {} v{} response does not decode, and it names brokers Thaw must rewrite",
                         spec ? spec->name : "?", p.api_version));
        break;
      }
    } else {
      out.clear();
    }
    bool written;
    if (out.empty()) {
      // The rewritten frame: its size prefix and the frame in one gather
      // write.
      uint8_t prefix[4];
      const uint32_t size = static_cast<uint32_t>(frame.size());
      prefix[0] = static_cast<uint8_t>(size >> 24);
      prefix[1] = static_cast<uint8_t>(size >> 16);
      prefix[2] = static_cast<uint8_t>(size >> 8);
      prefix[3] = static_cast<uint8_t>(size);
      written = co_await WriteClient(std::string_view(reinterpret_cast<const char*>(prefix), 4), frame);
    } else {
      written = co_await WriteClient(out);
    }
    if (!written) break;
    pending_.pop_front();
    if (pending_.empty()) drained_wake_.cancel();
    if (out.capacity() > (size_t{1} << 20)) std::string().swap(out);
    if (frame.capacity() > (size_t{1} << 20)) std::string().swap(frame);
  }
  Close();
}

asio::awaitable<void> ProxyConnection::ClientLoop() {
  const int32_t max_frame = proxy_.options().max_frame_bytes;
  std::string frame;
  while (!closed_) {
    uint8_t prefix[4];
    asio::error_code ec;
    co_await asio::async_read(client_, asio::buffer(prefix, 4), asio::redirect_error(use_awaitable, ec));
    if (ec) break;  // the client went away (or Close)
    const int32_t size = FrameSize(prefix);
    if (size < 8 || size > max_frame) {
      Fail(fmt::format("request frame of {} bytes is outside the accepted 8..{} (socket.request.max.bytes)", size,
                       max_frame));
      break;
    }
    frame.assign(reinterpret_cast<const char*>(prefix), 4);
    ec = co_await kafka::ReadGrowing(client_, &frame, 4, static_cast<size_t>(size));
    if (ec) {
      Fail(fmt::format("connection lost inside a {}-byte request frame: {}", size, ec.message()));
      break;
    }
    const std::string_view body(frame.data() + 4, static_cast<size_t>(size));
    kafka::client::RequestPeek peek;
    kafka::client::PeekRequest(body, &peek);
    Pending pending{peek.correlation_id, peek.api_key, peek.api_version, Rewrite::kNone};
    bool ok = true;
    switch (peek.api_key) {
      case kProduce: {
        auto acks = ProduceAcks(body, peek.api_version);
        ok = co_await Forward(frame, acks && *acks == 0 ? nullptr : &pending);
        break;
      }
      case kMetadata: {
        pending.rewrite = Rewrite::kMetadata;
        const ColdViews* views = proxy_.tiers().views;
        if (!views || views->empty()) {
          ok = co_await Forward(frame, &pending);
          break;
        }
        // Views configured: every answer gets Thaw's broker, and a request
        // naming views is rewritten. One that does not decode goes as it is
        // (the broker answers or closes; its answer is relayed unchanged).
        msg::RequestHeader header;
        msg::MetadataRequest req;
        if (!DecodeRequest(body, peek, &header, &req)) {
          ok = co_await Forward(frame, &pending);
          break;
        }
        auto plan = std::make_shared<const MetadataPlan>(PrepareMetadata(*views, peek.api_version, req));
        pending.views = plan;
        // (A named string, not a conditional's temporary: GCC's coroutines
        // destroy such a temporary twice across a co_await.)
        if (plan->request_changed) frame = EncodeRequest(header, req, peek.api_version);
        ok = co_await Forward(frame, &pending);
        break;
      }
      case kOffsetCommit:
      case kOffsetFetch: {
        // Offsets of views live under their base topics' names upstream.
        const ColdViews* views = proxy_.tiers().views;
        msg::RequestHeader header;
        msg::OffsetCommitRequest commit;
        msg::OffsetFetchRequest fetch;
        std::vector<std::string> renamed;
        if (views && !views->empty()) {
          if (peek.api_key == kOffsetCommit && DecodeRequest(body, peek, &header, &commit)) {
            renamed = RenameViewsToBases(*views, commit);
          } else if (peek.api_key == kOffsetFetch && DecodeRequest(body, peek, &header, &fetch)) {
            renamed = RenameViewsToBases(*views, fetch);
          }
        }
        if (renamed.empty()) {
          ok = co_await Forward(frame, &pending);
          break;
        }
        pending.rewrite = peek.api_key == kOffsetCommit ? Rewrite::kOffsetCommit : Rewrite::kOffsetFetch;
        pending.renamed = std::make_shared<const std::vector<std::string>>(std::move(renamed));
        frame = peek.api_key == kOffsetCommit ? EncodeRequest(header, commit, peek.api_version)
                                              : EncodeRequest(header, fetch, peek.api_version);
        ok = co_await Forward(frame, &pending);
        break;
      }
      case kFindCoordinator:
      case kDescribeCluster:
      case kApiVersions:
        pending.rewrite = RewriteOf(peek.api_key);
        ok = co_await Forward(frame, &pending);
        break;
      case kFetch:
      case kListOffsets: {
        // Decoded: a version ApiVersions did not offer, or bytes that do not
        // decode, go to the broker as they are (it answers or closes).
        kafka::WireReader in(body);
        msg::RequestHeader header;
        const auto* spec = kafka::FindApiSpec(peek.api_key);
        const bool known = spec && peek.api_version >= spec->min_version && peek.api_version <= spec->max_version &&
                           header.Read(in, msg::RequestHeaderVersion(peek.api_key, peek.api_version)).ok();
        if (header.client_id) client_id_ = *header.client_id;
        if (peek.api_key == kListOffsets) {
          msg::ListOffsetsRequest req;
          if (known && req.Read(in, peek.api_version).ok() && NamesTieredTopic(proxy_.tiers(), req)) {
            co_await Drained();
            if (closed_) break;
            exchanging_ = true;
            auto reply = co_await TieredListOffsets(proxy_.tiers(), *upstream_, header, req);
            exchanging_ = false;
            if (!reply.ok()) {
              if (!closed_) UpstreamLost(reply.status().message());
              ok = false;
              break;
            }
            ok = co_await WriteClient(kafka::client::EncodeResponseFrame(
                peek.correlation_id, msg::ResponseHeaderVersion(peek.api_key, peek.api_version), *reply));
          } else {
            ok = co_await Forward(frame, &pending);
          }
          break;
        }
        msg::FetchRequest req;
        if (!known || peek.api_version > 12 || !req.Read(in, peek.api_version).ok()) {
          ok = co_await Forward(frame, &pending);
          break;
        }
        if (req.session_id != 0) {
          // Thaw never hands out a session (KIP-227): an incremental fetch
          // lists only what changed and cannot be forwarded as a full one.
          co_await Drained();
          msg::FetchResponse resp;
          resp.error_code = static_cast<int16_t>(kafka::ErrorCode::kFetchSessionIdNotFound);
          kafka::WireWriter w;
          resp.Write(w, peek.api_version);
          ok = co_await WriteClient(kafka::client::EncodeResponseFrame(
              peek.correlation_id, msg::ResponseHeaderVersion(kFetch, peek.api_version), w.data()));
          break;
        }
        // Sessionless: the broker creates no session, answers with session
        // id 0, and every client then keeps sending full fetches.
        req.session_epoch = -1;
        req.forgotten_topics_data.clear();
        if (NamesTieredTopic(proxy_.tiers(), req)) {
          co_await Drained();
          if (closed_) break;
          exchanging_ = true;
          auto reply = co_await TieredFetch(proxy_.tiers(), *upstream_, header, req, list_offsets_version_,
                                         &upstream_bounds_);
          exchanging_ = false;
          if (!reply.ok()) {
            if (!closed_) UpstreamLost(reply.status().message());
            ok = false;
            break;
          }
          const std::string head = kafka::EncodeResponseHead(
              peek.correlation_id, msg::ResponseHeaderVersion(kFetch, peek.api_version), (*reply)->size());
          ok = co_await WriteClientPieces(head, **reply);
          break;
        }
        kafka::WireWriter w;
        req.Write(w, peek.api_version);
        ok = co_await Forward(kafka::client::EncodeRequestFrame(
                                  header, msg::RequestHeaderVersion(kFetch, peek.api_version), w.data()),
                              &pending);
        break;
      }
      default:
        ok = co_await Forward(frame, &pending);
        break;
    }
    if (!ok || closed_) break;
    if (proxy_.stopping() && pending_.empty()) break;
    if (frame.capacity() > (size_t{1} << 20)) std::string().swap(frame);
  }
  // Let queued responses reach the client before closing (a stop, or a
  // client that half-closed after its last request).
  if (!closed_) co_await Drained();
}

}  // namespace thaw::merged

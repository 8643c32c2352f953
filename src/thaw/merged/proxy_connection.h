// One client connection of the tiered proxy and its own upstream connection.
//
// Requests are read in order. Most are forwarded frame for frame and their
// responses relayed back untouched, pipelined as the client sends them
// (a queue of correlation ids keeps the order). Responses that name brokers
// (Metadata, FindCoordinator, DescribeCluster) and ApiVersions are decoded
// and rewritten on the way back (broker_map.h, api_versions.h). Fetch is
// made sessionless. A Fetch or ListOffsets naming a tiered topic waits until
// nothing else is in flight, then is answered across both tiers
// (tiered_requests.h), its extra upstream requests on this same connection.
// Produce with acks=0 has no response and is not waited for.
//
// Bad input closes only this pair, with one log line: a frame outside
// 8..max_frame_bytes, a response out of order, an upstream that fails.
#pragma once

#include <asio.hpp>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "thaw/kafka/client/connection.h"
#include "thaw/kafka/stream.h"
#include "thaw/merged/splice_relay.h"
#include "thaw/merged/tiered_requests.h"

namespace thaw::merged {

class Proxy;

class ProxyConnection : public std::enable_shared_from_this<ProxyConnection> {
 public:
  // `node_id`: the upstream broker whose port the client connected to (-1:
  // the bootstrap listener).
  // `client`: plain or TLS (the listener's --tls-cert); its handshake is Run's first step.
  ProxyConnection(Proxy& proxy, kafka::Stream client, int32_t node_id);

  asio::awaitable<void> Run();
  // Closes both legs now.
  void Close();
  bool closed() const { return closed_; }
  // A request in flight (Stop lets it answer).
  bool busy() const { return exchanging_ || !pending_.empty(); }

 private:
  enum class Rewrite { kNone, kApiVersions, kMetadata, kFindCoordinator, kDescribeCluster, kOffsetCommit, kOffsetFetch };
  struct Pending {
    int32_t correlation_id;
    int16_t api_key;
    int16_t api_version;
    Rewrite rewrite;
    // Metadata naming `:cold_suffix` views: what to add to the answer.
    std::shared_ptr<const MetadataPlan> views;
    // OffsetCommit / OffsetFetch: views renamed to their bases, named back.
    std::shared_ptr<const std::vector<std::string>> renamed;
  };

  // How the response to a request of `api_key` is rewritten on its way back.
  static Rewrite RewriteOf(int16_t api_key);
  asio::awaitable<void> ClientLoop();
  asio::awaitable<void> Relay();
  // Relays one response frame from the upstream to the client as it arrives.
  asio::awaitable<bool> StreamResponse(const Pending& p);
  // Forwards a request frame (size prefix included) and queues its response.
  asio::awaitable<bool> Forward(std::string_view frame, const Pending* pending);
  // Waits until every queued response was relayed.
  asio::awaitable<void> Drained();
  // Writes `frame`, then `more` (a gather write).
  asio::awaitable<bool> WriteClient(std::string_view frame, std::string_view more = {});
  // Writes `head`, then `body`'s pieces in place (a tiered Fetch's table
  // batches, not copied into a frame).
  asio::awaitable<bool> WriteClientPieces(std::string_view head, const kafka::WireWriter& body);
  // After a write to the client: true if it went out; else the connection is
  // closed (and a failure logged unless the client just went away).
  bool WriteDone(const asio::error_code& ec);
  // The relayed response frame (without size prefix) rewritten as `p` says;
  // false when it does not decode.
  bool RewriteResponse(const Pending& p, std::string* frame);
  void Fail(const std::string& why);
  // The upstream leg failed: noted (rate-limited per broker) and closed.
  void UpstreamLost(const std::string& why);

  Proxy& proxy_;
  kafka::Stream client_;
  int32_t node_id_;
  std::string peer_;
  std::string client_id_ = "?";
  std::unique_ptr<kafka::client::Connection> upstream_;
  std::deque<Pending> pending_;
  asio::steady_timer relay_wake_;   // cancelled when pending_ gains an entry
  asio::steady_timer drained_wake_;  // cancelled when pending_ empties
  std::string stream_buffer_;  // StreamResponse's, at most 256 KiB
  bool exchanging_ = false;
  bool closed_ = false;
  int16_t list_offsets_version_ = 5;  // narrowed by the upstream's ApiVersions
  UpstreamBounds upstream_bounds_;    // of partitions this connection was refused
  SplicePipe splice_pipe_;            // large responses relayed as they are (splice_relay.h)
};

}  // namespace thaw::merged
